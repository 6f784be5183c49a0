-- The soak's load: the scenarios' routes in one stream, reads and writes mixed by the weights
-- below (per 100 requests), answers counted by status class so that the soak reports non-2xx.
-- Likes toggle as in like_toggle.lua (a DELETE undoes a PUT this thread made 128 PUTs earlier),
-- so only comments grow the data set.
local c = require("common")

local threads = {}
function setup(thread)
  c.setup(thread)
  table.insert(threads, thread)
end
init = c.init

local json = { ["Content-Type"] = "application/json" }
local comment = '{"body":"Soak comment: nice post, thanks for sharing it with all of us here."}'
local like = require("like_toggle_pairs")(c)

local routes = {
  { 30, function() return wrk.format("GET", "/api/posts/" .. c.post()) end },
  { 10, function() return wrk.format("GET", "/api/posts/recent?limit=50") end },
  { 15, function() return wrk.format("GET", "/api/posts/" .. c.post() .. "/children") end },
  { 15, function() return wrk.format("GET", "/api/posts/" .. c.post() .. "/comments?limit=50") end },
  { 10, function() return wrk.format("GET", "/api/posts/" .. c.post() .. "/likes?limit=50") end },
  { 12, like },
  { 8, function()
      json["X-User-Email"] = c.email()
      return wrk.format("POST", "/api/posts/" .. c.post() .. "/comments", json, comment)
    end },
}

request = function()
  local r = math.random(1, 100)
  for _, route in ipairs(routes) do
    r = r - route[1]
    if r <= 0 then return route[2]() end
  end
  return routes[1][2]()
end

s2xx, s3xx, s4xx, s5xx = 0, 0, 0, 0
response = function(status)
  if status < 300 then s2xx = s2xx + 1
  elseif status < 400 then s3xx = s3xx + 1
  elseif status < 500 then s4xx = s4xx + 1
  else s5xx = s5xx + 1 end
end

-- The RESULT line of common.lua, then: STATUS 2xx 3xx 4xx 5xx (over all threads).
done = function(summary, latency, requests)
  c.done(summary, latency, requests)
  local t = { 0, 0, 0, 0 }
  for _, thread in ipairs(threads) do
    t[1] = t[1] + thread:get("s2xx"); t[2] = t[2] + thread:get("s3xx")
    t[3] = t[3] + thread:get("s4xx"); t[4] = t[4] + thread:get("s5xx")
  end
  io.write(string.format("STATUS %d %d %d %d\n", t[1], t[2], t[3], t[4]))
end
