-- GET /api/posts/:id/children — PostService.children(of:): the parent's existence and its page
-- (default limit 50, plus one) in one statement.
\set id random(1, :maxid)
SELECT c.* FROM (SELECT id FROM posts WHERE id = :id) parent
LEFT JOIN LATERAL (
    SELECT p.id, p.user_id, p.parent_id, p.title, p.summary, p.body, p.image_url, p.created_at, p.timezone,
           p.location_tag, p.ai_generated, pr.username AS author_name, p.child_count, p.like_count, p.comment_count
    FROM posts p LEFT JOIN profiles pr ON pr.user_id = p.user_id WHERE p.parent_id = parent.id
    ORDER BY p.created_at DESC, p.id DESC LIMIT 51
) c ON true;
