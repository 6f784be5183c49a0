-- GET /api/posts/:id/comments?limit=50 — CommentService.page(of:): the post's comment_count and
-- its oldest-first page with each author's profile, in one statement.
\set id random(1, :maxid)
SELECT page.*, post.comment_count FROM (SELECT id, comment_count FROM posts WHERE id = :id) post
LEFT JOIN LATERAL (
    SELECT c.id AS comment_id, c.post_id, c.user_id AS author_id, c.body, c.created_at AS commented_at,
           pr.user_id, pr.username, pr.full_name, pr.bio, pr.avatar_url, pr.created_at
    FROM comments c JOIN profiles pr ON pr.user_id = c.user_id WHERE c.post_id = post.id
    ORDER BY c.created_at, c.id LIMIT 51
) page ON true
ORDER BY page.commented_at, page.comment_id;
