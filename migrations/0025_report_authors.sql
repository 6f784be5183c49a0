-- Whose content a report is about, kept on the report: the console's view of a user's record
-- (the Users page, `GET /api/moderation/users/<id>/reports`) found a report on a post or a
-- comment by joining to it, so a report whose content was removed since (its `post_id` or
-- `comment_id` nulled by the removal) dropped off the record of the user it was about, just
-- when a moderator needs it. NULL once that user's account is gone.
ALTER TABLE reports ADD COLUMN target_user_id bigint REFERENCES users(id) ON DELETE SET NULL;

UPDATE reports r SET target_user_id = coalesce(
    r.user_id,
    (SELECT p.user_id FROM posts p WHERE p.id = r.post_id),
    (SELECT c.user_id FROM comments c WHERE c.id = r.comment_id));

-- A user's record, newest first.
CREATE INDEX reports_target_user_idx ON reports (target_user_id, created_at DESC, id DESC)
    WHERE target_user_id IS NOT NULL;
