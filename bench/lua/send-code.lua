-- POST /api/auth/send-code with a new address every request (run id, thread, counter), so
-- the five-codes-an-hour limit per address is never what is measured. Run with
-- RATE_LIMIT_IP=0 on the server.
local threads = 0
function setup(thread)
    threads = threads + 1
    thread:set("thread_id", threads)
end

local counter = 0
local prefix
function init(args)
    prefix = "b" .. os.time() .. "-" .. math.random(1, 1000000000) .. "-" .. thread_id .. "-"
end

function request()
    counter = counter + 1
    return wrk.format("POST", "/api/auth/send-code", {["Content-Type"] = "application/json"},
        '{"email":"' .. prefix .. counter .. '@bench.test"}')
end
