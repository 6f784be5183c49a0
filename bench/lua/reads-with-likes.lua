-- Issue 34's load: anonymous reads of one scenario (READ=post_by_id, the default, or
-- recent50) with one like in ten mixed in (as like_toggle.lua: a DELETE undoes a PUT this
-- thread made 128 PUTs earlier, so the data set stays as it was). RESULT counts both.
local c = require("common"); c.install()
local pending, first, last, put_next = {}, 1, 0, false
local count = 0
local read = os.getenv("READ") or "post_by_id"

local function like()
  put_next = not put_next
  if put_next or last - first < 128 then
    local post, email = c.post(), c.email()
    last = last + 1
    pending[last] = { post, email }
    return wrk.format("PUT", "/api/posts/" .. post .. "/like", { ["X-User-Email"] = email })
  end
  local p = pending[first]
  pending[first] = nil
  first = first + 1
  return wrk.format("DELETE", "/api/posts/" .. p[1] .. "/like", { ["X-User-Email"] = p[2] })
end

request = function()
  count = count + 1
  if count % 10 == 0 then return like() end
  if read == "recent50" then return wrk.format("GET", "/api/posts/recent?limit=50") end
  return wrk.format("GET", "/api/posts/" .. c.post())
end
