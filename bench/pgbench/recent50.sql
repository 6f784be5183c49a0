-- GET /api/posts/recent?limit=50 — PostService.page(parent: .any): one row more than the page, for has_more.
SELECT p.id, p.user_id, p.parent_id, p.title, p.summary, p.body, p.image_url, p.created_at, p.timezone,
       p.location_tag, p.ai_generated, pr.username AS author_name, p.child_count, p.like_count, p.comment_count
FROM posts p LEFT JOIN profiles pr ON pr.user_id = p.user_id WHERE true
ORDER BY p.created_at DESC, p.id DESC LIMIT 51;
