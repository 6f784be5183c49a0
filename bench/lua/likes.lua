-- GET /api/posts/<random id in 1..MAXID>/likes?limit=50: the likers' profiles, newest first.
-- This server only (the peer has no such route). Found through LUA_PATH like the shared scripts.
local c = require("common"); c.install()
request = function() return wrk.format("GET", "/api/posts/" .. c.post() .. "/likes?limit=50") end
