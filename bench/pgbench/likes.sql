-- GET /api/posts/:id/likes?limit=50 — LikeService.likers(of:): like_count and the likers'
-- profiles, newest like first, in one statement.
\set id random(1, :maxid)
SELECT post.like_count, l.created_at AS liked_at, pr.user_id, pr.username, pr.full_name, pr.bio, pr.avatar_url, pr.created_at
FROM (SELECT id, like_count FROM posts WHERE id = :id) post
LEFT JOIN LATERAL (
    SELECT l.created_at, l.user_id FROM likes l WHERE l.post_id = post.id
    ORDER BY l.created_at DESC, l.user_id DESC LIMIT 51
) l ON true
LEFT JOIN profiles pr ON pr.user_id = l.user_id
ORDER BY l.created_at DESC, l.user_id DESC;
