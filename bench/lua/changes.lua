-- GET /api/changes?since=<SINCE>&limit=100: a catch-up page. SINCE is a position taken (with
-- GET /api/changes) before writes ran, so that every page holds 100 real changes. This server only.
local c = require("common"); c.install()
local path = "/api/changes?since=" .. assert(os.getenv("SINCE"), "SINCE is not set") .. "&limit=100"
request = function() return wrk.format("GET", path) end
