-- API.md "Following, threads, mentions, notifications": follows, the counters a profile
-- keeps in its row, and each reader's home timeline (fan-out on write: see
-- Sources/PostsServer/Follows/FeedService.swift for why, with the measurements).

-- No post may be written or removed while the counters are backfilled and their triggers
-- made (readers go on): the backfill is exact, with no write between it and the triggers.
LOCK TABLE posts IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE follows (
    follower_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    followee_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (follower_id, followee_id),
    CHECK (follower_id <> followee_id)
);
-- GET /api/users/<id>/following, newest first (a keyset walk).
CREATE INDEX follows_following_idx ON follows (follower_id, created_at DESC, followee_id DESC);
-- GET /api/users/<id>/followers, newest first; also every follower of a new post's author
-- (the fan-out) and the followee side of an account's deletion.
CREATE INDEX follows_followers_idx ON follows (followee_id, created_at DESC, follower_id DESC);

-- Exact, kept in the row (a profile is read far more often than it changes). Follows are
-- counted by the statements that follow, unfollow, block and delete accounts; posts by the
-- triggers below, which see every path that adds, removes or hands over a post (a foreign
-- key's cascade included).
ALTER TABLE profiles
    ADD COLUMN followers_count int NOT NULL DEFAULT 0,
    ADD COLUMN following_count int NOT NULL DEFAULT 0,
    ADD COLUMN posts_count int NOT NULL DEFAULT 0;
UPDATE profiles pr SET posts_count = n.n
FROM (SELECT user_id, count(*) AS n FROM posts GROUP BY user_id) n WHERE pr.user_id = n.user_id;

-- The home feed: one row per (reader, post of someone the reader follows), written when the
-- post is (for every follower of its author) and when a follow begins (the followee's
-- newest posts, a bounded number); removed on unfollow and block (by author), and with the
-- post or the reader (the triggers below). The reader's own posts are not copied: the feed
-- reads them from posts_user_created_idx. The primary key is the feed's keyset walk, read
-- backwards.
-- No foreign keys: a post's fan-out writes a row per follower, and each key's check is a
-- query per row that also locks the referenced row (the reader's users row: a write per
-- follower). Measured for an author with 1,000 followers (pgbench, one client, a busy
-- 2-core machine): 26.6 ms per post with both keys and ON CONFLICT, 19.1 without the
-- users key, 14.1 without either, 10.1 without ON CONFLICT either (a new post's rows
-- cannot conflict). The triggers do the keys' cascades instead.
CREATE TABLE feed_entries (
    user_id bigint NOT NULL,
    post_id bigint NOT NULL,
    author_id bigint NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, created_at, post_id)
);
-- Unfollow and block remove one author's rows from one reader's feed. (Without it they
-- would read the reader's whole feed; it costs a post's fan-out ~30%: 7.1 ms of the 10.1.)
CREATE INDEX feed_entries_author_idx ON feed_entries (user_id, author_id);
-- A deleted post's rows, and a tombstone's.
CREATE INDEX feed_entries_post_idx ON feed_entries (post_id);

-- A deleted user's own feed (its posts' rows go with its posts, below).
CREATE FUNCTION users_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM feed_entries fe USING old_users u WHERE fe.user_id = u.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER users_deleted AFTER DELETE ON users REFERENCING OLD TABLE AS old_users
    FOR EACH STATEMENT EXECUTE FUNCTION users_deleted();

-- New posts: their authors' posts_count, and a row in each follower's feed. The author's
-- follows hold still until the commit: follow, unfollow and block take the profile lock of
-- both users exclusively (ChangeLog.lock(profile:)), this takes it shared, before the
-- profile row (one order: no deadlock between them). And the statements below read with a
-- snapshot taken after the lock (a trigger function's statements each take their own, in
-- READ COMMITTED), so a follow that committed while this waited is seen: a post and a
-- follow made at the same moment give exactly one feed row, by the fan-out or by the
-- follow's backfill, never none.
CREATE FUNCTION posts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(-a.user_id)
    FROM (SELECT DISTINCT user_id FROM new_posts ORDER BY user_id) a;
    UPDATE profiles pr SET posts_count = pr.posts_count + n.n
    FROM (SELECT user_id, count(*) AS n FROM new_posts GROUP BY user_id) n WHERE pr.user_id = n.user_id;
    INSERT INTO feed_entries (user_id, post_id, author_id, created_at)
    SELECT f.follower_id, p.id, p.user_id, p.created_at
    FROM new_posts p JOIN follows f ON f.followee_id = p.user_id
    WHERE NOT p.deleted;
    RETURN NULL;
END
$$;
CREATE TRIGGER posts_inserted AFTER INSERT ON posts REFERENCING NEW TABLE AS new_posts
    FOR EACH STATEMENT EXECUTE FUNCTION posts_inserted();

-- Removed posts, however removed (a subtree, a moderator's removal, a parent's or an
-- account's cascade): their authors' counts and their feed rows.
CREATE FUNCTION posts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE profiles pr SET posts_count = pr.posts_count - n.n
    FROM (SELECT user_id, count(*) AS n FROM old_posts GROUP BY user_id) n WHERE pr.user_id = n.user_id;
    DELETE FROM feed_entries fe USING old_posts p WHERE fe.post_id = p.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER posts_deleted AFTER DELETE ON posts REFERENCING OLD TABLE AS old_posts
    FOR EACH STATEMENT EXECUTE FUNCTION posts_deleted();

-- A post handed to another user: a deleted account's tombstone, which goes to the reserved
-- user and out of every feed. Row by row (a transition table cannot go with `OF user_id`,
-- and without it every like and comment would pay for it); only that statement sets user_id.
CREATE FUNCTION posts_author_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE profiles SET posts_count = posts_count + CASE WHEN user_id = NEW.user_id THEN 1 ELSE -1 END
    WHERE user_id IN (OLD.user_id, NEW.user_id);
    DELETE FROM feed_entries WHERE post_id = NEW.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER posts_author_changed AFTER UPDATE OF user_id ON posts
    FOR EACH ROW WHEN (OLD.user_id IS DISTINCT FROM NEW.user_id) EXECUTE FUNCTION posts_author_changed();
