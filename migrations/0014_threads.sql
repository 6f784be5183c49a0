-- API.md "Following, threads, mentions, notifications": threaded comments, comment likes
-- and mentions.

-- Replies are one level deep: `reply_to` names a top-level comment of the same post (the
-- server attaches a reply to a reply to that reply's top-level comment). Deleting a
-- top-level comment deletes its replies; the writes keep `posts.comment_count` (which
-- counts replies too), `reply_count` and `like_count` exact in the statement that changes
-- them, as every other counter.
ALTER TABLE comments
    ADD COLUMN reply_to uuid REFERENCES comments(id) ON DELETE CASCADE,
    ADD COLUMN reply_count int NOT NULL DEFAULT 0,
    ADD COLUMN like_count int NOT NULL DEFAULT 0,
    -- The `@username`s of the body that named someone when it was written (see
    -- Sources/PostsServer/Mentions/Mentions.swift): NULL for none, as most comments have.
    -- `json`, not `jsonb`: it is never queried into, and a read copies its text as it is.
    ADD COLUMN mentions json;

-- A post's top-level comments, oldest first, however many replies it has.
CREATE INDEX comments_post_top_idx ON comments (post_id, created_at, id) WHERE reply_to IS NULL;
-- A comment's replies, oldest first (and the cascade of its delete).
CREATE INDEX comments_replies_idx ON comments (reply_to, created_at, id) WHERE reply_to IS NOT NULL;

CREATE TABLE comment_likes (
    comment_id uuid NOT NULL REFERENCES comments(id) ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES profiles(user_id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (comment_id, user_id)
);
-- An account's likes, withdrawn when it is deleted.
CREATE INDEX comment_likes_user_idx ON comment_likes (user_id);

ALTER TABLE posts ADD COLUMN mentions json;
