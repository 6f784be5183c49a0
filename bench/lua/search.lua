-- Search requests over the vocabulary bench/search.sh writes (words w1..w<VOCABULARY>, rank r
-- drawn with probability ~1/r, as word frequencies go), chosen by SEARCH:
--   one     GET /api/search?q=<a word of rank WORD_LO..WORD_HI>
--   two     GET /api/search?q=<two such words>
--   people  GET /api/search?type=people&q=user<2 to 4 digits>   (a username prefix)
--   tag     GET /api/tags/tag<rank 1..TAGS>/posts?limit=20
--   create  POST /api/posts with a title and body of vocabulary words
-- Callers are user<i>@example.com (trust mode), as the shared scripts' are.
local c = require("common"); c.install()
local kind = os.getenv("SEARCH") or "one"
local lo = tonumber(os.getenv("WORD_LO") or "300")
local hi = tonumber(os.getenv("WORD_HI") or "20000")
local tags = tonumber(os.getenv("TAGS") or "1000")
-- create: words in the title, summary and body (the shared seed's posts: ~6, 15, 100)
local title_words = tonumber(os.getenv("TITLE_WORDS") or "6")
local summary_words = tonumber(os.getenv("SUMMARY_WORDS") or "15")
local body_words = tonumber(os.getenv("BODY_WORDS") or "100")

-- log-uniform in [a, b]: rank r with probability ~1/r
local function rank(a, b) return math.floor(math.exp(math.log(a) + math.random() * (math.log(b + 1) - math.log(a)))) end
local function word() return "w" .. rank(lo, hi) end
local function words(n)
  local t = {}
  for i = 1, n do t[i] = "w" .. rank(1, 50000) end
  return table.concat(t, " ")
end

local headers = { ["Content-Type"] = "application/json" }
request = function()
  headers["X-User-Email"] = c.email()
  if kind == "one" then
    return wrk.format("GET", "/api/search?limit=20&q=" .. word(), headers)
  elseif kind == "two" then
    return wrk.format("GET", "/api/search?limit=20&q=" .. word() .. "+" .. word(), headers)
  elseif kind == "people" then
    return wrk.format("GET", "/api/search?type=people&limit=20&q=user" .. math.random(10, 9999), headers)
  elseif kind == "tag" then
    return wrk.format("GET", "/api/tags/tag" .. rank(1, tags) .. "/posts?limit=20", headers)
  else
    local body = '{"title":"' .. words(title_words) .. '","summary":"' .. words(summary_words) ..
      '","body":"' .. words(body_words) .. '"}'
    return wrk.format("POST", "/api/posts", headers, body)
  end
end
