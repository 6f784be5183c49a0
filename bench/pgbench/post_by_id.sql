-- GET /api/posts/:id — PostService.post(_:caller:) without a caller (PostRows.columns, authorJoin).
\set id random(1, :maxid)
SELECT p.id, p.user_id, p.parent_id, p.title, p.summary, p.body, p.image_url, p.created_at, p.timezone,
       p.location_tag, p.ai_generated, pr.username AS author_name, p.child_count, p.like_count, p.comment_count
FROM posts p LEFT JOIN profiles pr ON pr.user_id = p.user_id WHERE p.id = :id;
