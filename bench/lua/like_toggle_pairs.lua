-- Likes that leave the data set as it was, as the shared like_toggle.lua makes them: every
-- other request a PUT of a random (post, user), else a DELETE of the PUT this thread made
-- 128 PUTs earlier. `require("like_toggle_pairs")(c)` returns one thread's request maker
-- (`c`: the shared common.lua, for its random post and user).
return function(c)
  local pending, first, last, put_next = {}, 1, 0, false
  return function()
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
end
