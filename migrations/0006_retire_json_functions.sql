-- The JSON of a post, a profile and a comment is now described once, in the server
-- (Sources/PostsServer/Resources/ResourceShape.swift and each resource's shape): the routes'
-- answers and the changes' copies are both made from that description, so these copies of
-- it in SQL retire.
DROP FUNCTION comment_json(comments, profiles);
DROP FUNCTION post_json(posts, text);
DROP FUNCTION profile_json(profiles);
DROP FUNCTION api_time(timestamptz);
