-- API.md "Safety": reports, the moderation log, and what a suspension hides.

-- A report names exactly one target. `target_key` ('post:12', 'comment:<uuid>', 'user:7')
-- is the target as it was reported: it survives the target's deletion (the foreign keys
-- are nulled) and groups the open reports on one target.
CREATE TABLE reports (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    reporter_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    post_id bigint REFERENCES posts(id) ON DELETE SET NULL,
    comment_id uuid REFERENCES comments(id) ON DELETE SET NULL,
    user_id bigint REFERENCES users(id) ON DELETE SET NULL,
    target_key text NOT NULL,
    reason text NOT NULL CHECK (reason IN ('spam', 'harassment', 'hate', 'nudity', 'violence', 'self_harm', 'illegal', 'other')),
    details text NOT NULL DEFAULT '',
    status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    created_at timestamptz NOT NULL DEFAULT now(),
    resolved_at timestamptz,
    resolved_by bigint REFERENCES users(id) ON DELETE SET NULL,
    action text CHECK (action IN ('dismiss', 'remove', 'suspend'))
);
-- One open report per reporter and target: a second one answers the first.
CREATE UNIQUE INDEX reports_one_open_idx ON reports (reporter_id, target_key) WHERE status = 'open';
-- The queue: oldest first, by status.
CREATE INDEX reports_queue_idx ON reports (status, created_at, id);
CREATE INDEX reports_target_idx ON reports (target_key) WHERE status = 'open';

-- Every moderator action, newest first.
CREATE TABLE moderation_log (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    moderator_id bigint REFERENCES users(id) ON DELETE SET NULL,
    action text NOT NULL,
    target_key text NOT NULL,
    report_id bigint REFERENCES reports(id) ON DELETE SET NULL,
    note text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX moderation_log_recent_idx ON moderation_log (created_at DESC, id DESC);

-- A suspended user's posts and comments disappear from every read until unsuspended. The
-- reads join the author's profile already (for author_name): the flag is kept there, in
-- the same transaction as users.suspended_at, so hiding costs no extra join.
ALTER TABLE profiles ADD COLUMN suspended boolean NOT NULL DEFAULT false;
