-- scripts/faults' steady load: reads of the newest posts and post creations, half and half,
-- each thread writing as its own user. Every creation answered 201 has its id written to
-- ACKED_DIR/acked-<thread>.txt at once (line-buffered), so that the script can check that
-- every acknowledged write is in the database after the faults, a SIGTERM included.
local dir = os.getenv("ACKED_DIR") or "."
local counter = 0
local threads = {}

function setup(thread)
  counter = counter + 1
  thread:set("number", counter)
  table.insert(threads, thread)
end

local acked, write_next
local post = '{"title":"Fault load","summary":"Written under faults","body":"It must survive them."}'

function init(args)
  acked = io.open(dir .. "/acked-" .. number .. ".txt", "w")
  acked:setvbuf("line")
  write_next = false
end

function request()
  write_next = not write_next
  if write_next then
    return wrk.format("POST", "/api/posts", {
      ["Content-Type"] = "application/json",
      ["X-User-Email"] = "fault-load-" .. number .. "@example.com",
    }, post)
  end
  return wrk.format("GET", "/api/posts/recent?limit=10")
end

s2xx, s503, sother = 0, 0, 0
function response(status, headers, body)
  if status < 300 then
    s2xx = s2xx + 1
    if status == 201 then
      local id = body:match('"post":{"id":(%d+)')
      if id then acked:write(id, "\n") end
    end
  elseif status == 503 then
    s503 = s503 + 1
  else
    sother = sother + 1
  end
end

function done(summary, latency, requests)
  local t = { 0, 0, 0 }
  for _, thread in ipairs(threads) do
    t[1] = t[1] + thread:get("s2xx"); t[2] = t[2] + thread:get("s503"); t[3] = t[3] + thread:get("sother")
  end
  local e = summary.errors
  io.write(string.format("LOAD requests=%d 2xx=%d 503=%d other=%d connect=%d read=%d write=%d timeout=%d\n",
    summary.requests, t[1], t[2], t[3], e.connect, e.read, e.write, e.timeout))
end
