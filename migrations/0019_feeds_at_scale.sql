-- API.md "Feeds at any scale": a new post's fan-out leaves its transaction for the job
-- queue (`feed.fanout` jobs, Sources/PostsServer/Follows/FeedFanOut.swift), authors with
-- very many followers are not fanned out at all but merged into their followers' feeds as
-- they are read (FeedService.swift has the argument and the measurements), and what the
-- feeds and notifications keep is bounded (Sources/PostsServer/Upkeep/UpkeepPruner.swift).

-- The authors whose posts are read from `posts` by their followers' feeds rather than
-- copied into them: those who had `FEED_FANOUT_LIMIT` followers or more when they posted.
-- An author stays here (its followers' feeds merge it in; a row removed would leave a
-- gap of the posts it made while here). Small: one row per very large account.
CREATE TABLE feed_large_authors (
    user_id bigint PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    since timestamptz NOT NULL DEFAULT now()
);

-- NOTIFICATIONS_RETENTION: the oldest first, across recipients.
CREATE INDEX notifications_created_idx ON notifications (created_at);

-- PUSH_TOKEN_RETENTION: a token is removed once it has gone that long without being
-- registered again (`created_at` is its latest registration), the oldest first.
CREATE INDEX push_tokens_created_idx ON push_tokens (created_at);
