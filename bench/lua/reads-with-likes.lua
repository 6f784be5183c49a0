-- Issue 34's load: anonymous reads of one scenario (READ=post_by_id, the default, or
-- recent50) with one like in ten mixed in (as like_toggle.lua: a DELETE undoes a PUT this
-- thread made 128 PUTs earlier, so the data set stays as it was). RESULT counts both.
local c = require("common"); c.install()
local like = require("like_toggle_pairs")(c)
local count = 0
local read = os.getenv("READ") or "post_by_id"

request = function()
  count = count + 1
  if count % 10 == 0 then return like() end
  if read == "recent50" then return wrk.format("GET", "/api/posts/recent?limit=50") end
  return wrk.format("GET", "/api/posts/" .. c.post())
end
