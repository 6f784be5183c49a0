-- API.md "Safety: blocks, reports, moderation".

-- A block hides two users from each other (both ways) and forbids their interactions; a
-- mute hides the muted user's posts and comments from the muter's lists (one way). The
-- query that resolves each request's caller (its token's lookup) reads the caller's
-- `relations_version`, which every block, unblock, mute and unmute that concerns the user
-- moves on: a server reads the sets themselves only when it has not seen that version
-- (never at 0), the primary keys serving "whom I blocked", the second index "who blocked me".
CREATE TABLE blocks (
    blocker_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    blocked_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (blocker_id, blocked_id),
    CHECK (blocker_id <> blocked_id)
);
CREATE INDEX blocks_blocked_idx ON blocks (blocked_id, blocker_id);
-- GET /api/me/blocks: newest first.
CREATE INDEX blocks_listed_idx ON blocks (blocker_id, created_at DESC, blocked_id DESC);

CREATE TABLE mutes (
    muter_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    muted_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (muter_id, muted_id),
    CHECK (muter_id <> muted_id)
);
CREATE INDEX mutes_listed_idx ON mutes (muter_id, created_at DESC, muted_id DESC);

-- Roles are granted by the operator only (`posts-server role EMAIL ROLE`); a suspended
-- user's tokens are revoked and its content hidden until it is unsuspended.
-- Versions come from a sequence of their own, never restarted (a development reset restarts
-- user ids, and a new user 1 must not meet the old one's cached sets).
CREATE SEQUENCE relations_versions;
ALTER TABLE users
    ADD COLUMN relations_version bigint NOT NULL DEFAULT 0,
    ADD COLUMN role text NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'moderator', 'admin')),
    ADD COLUMN suspended_at timestamptz;
