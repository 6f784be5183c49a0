-- API.md "Notifications" and "Push": a row for the recipient of someone else's act, written
-- by the triggers below in the transaction of the act, whatever path makes it (a route, a
-- toggle, the dev seed), and gone when the act is undone: an unlike or an unfollow by the
-- triggers, a deleted post, comment or account by the foreign keys' cascades.
--
-- Never one's own act, never across a block (checked here against the table, under the
-- act's own transaction); a mute or a later block hides rows when they are read.
--
-- No foreign keys: each key's check locks the referenced row (FOR KEY SHARE), and a
-- popular author's users row would then be locked by every like of every one of their
-- posts at once (as feed_entries found, migration 0013). The act's own row already holds
-- what it names (a like's post, a follow's users), so nothing can vanish under a new
-- notification; the triggers at the end do the cascades.
CREATE TABLE notifications (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    recipient_id bigint NOT NULL,
    actor_id bigint NOT NULL,
    type text NOT NULL CHECK (type IN ('post.liked', 'comment.liked', 'post.commented', 'comment.replied',
                                       'post.replied', 'mentioned', 'followed')),
    post_id bigint,
    comment_id uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    read boolean NOT NULL DEFAULT false
);
-- The recipient's list, newest first (a keyset walk).
CREATE INDEX notifications_recipient_idx ON notifications (recipient_id, created_at DESC, id DESC);
-- `unread_count`: only the unread rows, however long the history.
CREATE INDEX notifications_unread_idx ON notifications (recipient_id, id) WHERE NOT read;
-- The cascades of a deleted post, comment, recipient or actor, and the undo of a like or a
-- follow.
-- A comment's notifications carry its post: (post, actor) finds an unlike's among a viral
-- post's thousands, and a deleted comment's among its post's.
CREATE INDEX notifications_post_idx ON notifications (post_id, actor_id) WHERE post_id IS NOT NULL;
CREATE INDEX notifications_actor_idx ON notifications (actor_id);

-- The live stream (`/api/notifications/events`) is the change feed's: a notification is
-- also recorded as a private change (type `notification`, `recipient_id` set, the
-- notification's JSON as data), keyed and delivered as every change is (see
-- Sources/PostsServer/Changes/ChangeLog.swift), to its recipient's streams only.
-- `/api/changes` and `/api/events` read only rows without a recipient.
ALTER TABLE changes ADD COLUMN recipient_id bigint;
CREATE INDEX changes_recipient_idx ON changes (recipient_id, txid, position) WHERE recipient_id IS NOT NULL;

-- Where a user's phones can be reached. A token names one device: registered by another
-- account (someone else signed in on that phone), it moves there.
CREATE TABLE push_tokens (
    platform text NOT NULL CHECK (platform IN ('apns', 'fcm', 'webpush')),
    token text NOT NULL,
    user_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    device_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (platform, token)
);
CREATE INDEX push_tokens_user_idx ON push_tokens (user_id, created_at);

-- One delivery to PUSH_WEBHOOK_URL per notification, written with it when the writing
-- session has `posts.push` on (the server sets it when PUSH_WEBHOOK_URL is set), and
-- retried for an hour. `delivery_id` is `X-Posts-Delivery`, the same on every try. A row
-- goes when it is delivered, or with its notification (an undone act is not pushed).
CREATE TABLE push_outbox (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    notification_id bigint NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
    delivery_id uuid NOT NULL DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    attempts int NOT NULL DEFAULT 0,
    failed_at timestamptz,
    last_error text
);
CREATE INDEX push_outbox_due_idx ON push_outbox (next_attempt_at, id) WHERE failed_at IS NULL;
CREATE INDEX push_outbox_notification_idx ON push_outbox (notification_id);

-- Whether `actor`'s act may notify `recipient`: not one's own, not across a block, not to
-- the reserved user `deleted` (a tombstone's owner, who never signs in).
CREATE FUNCTION notifiable(recipient bigint, actor bigint) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT recipient <> actor
       AND NOT EXISTS (SELECT 1 FROM blocks WHERE (blocker_id = recipient AND blocked_id = actor)
                                             OR (blocker_id = actor AND blocked_id = recipient))
       AND NOT EXISTS (SELECT 1 FROM profiles WHERE user_id = recipient AND username = 'deleted')
$$;

-- A notification's JSON, as the list shows it (Sources/PostsServer/Notifications/
-- NotificationShape.swift; a test holds the two together): what its private change
-- carries to the recipient's live streams.
CREATE FUNCTION notification_json(n notifications) RETURNS json LANGUAGE sql STABLE AS $$
    SELECT json_build_object(
        'id', n.id, 'type', n.type,
        'created_at', to_char(n.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'read', n.read,
        'actor', json_build_object(
            'user_id', pr.user_id, 'username', pr.username, 'full_name', pr.full_name, 'bio', pr.bio,
            'avatar_url', pr.avatar_url,
            'created_at', to_char(pr.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'followers_count', pr.followers_count, 'following_count', pr.following_count,
            'posts_count', pr.posts_count),
        'post_id', n.post_id, 'comment_id', n.comment_id)
    FROM profiles pr WHERE pr.user_id = n.actor_id
$$;

-- New notifications: their private changes, and their deliveries when this session pushes.
CREATE FUNCTION notifications_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO changes (type, user_id, recipient_id, data)
    SELECT 'notification', n.actor_id, n.recipient_id, notification_json(n) FROM new_notifications n ORDER BY n.id;
    IF current_setting('posts.push', true) = 'on' THEN
        INSERT INTO push_outbox (notification_id) SELECT id FROM new_notifications ORDER BY id;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER notifications_inserted AFTER INSERT ON notifications REFERENCING NEW TABLE AS new_notifications
    FOR EACH STATEMENT EXECUTE FUNCTION notifications_inserted();

-- Likes of posts: `post.liked` to the post's author; an unlike takes it back.
CREATE FUNCTION likes_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO notifications (recipient_id, actor_id, type, post_id)
    SELECT p.user_id, l.user_id, 'post.liked', l.post_id
    FROM new_likes l JOIN posts p ON p.id = l.post_id
    WHERE notifiable(p.user_id, l.user_id);
    RETURN NULL;
END
$$;
CREATE TRIGGER likes_notify AFTER INSERT ON likes REFERENCING NEW TABLE AS new_likes
    FOR EACH STATEMENT EXECUTE FUNCTION likes_notify();

CREATE FUNCTION likes_unnotify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM notifications n USING old_likes l
    WHERE n.post_id = l.post_id AND n.actor_id = l.user_id AND n.type = 'post.liked';
    RETURN NULL;
END
$$;
CREATE TRIGGER likes_unnotify AFTER DELETE ON likes REFERENCING OLD TABLE AS old_likes
    FOR EACH STATEMENT EXECUTE FUNCTION likes_unnotify();

-- Likes of comments: `comment.liked` to the comment's author.
CREATE FUNCTION comment_likes_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO notifications (recipient_id, actor_id, type, post_id, comment_id)
    SELECT c.user_id, l.user_id, 'comment.liked', c.post_id, l.comment_id
    FROM new_likes l JOIN comments c ON c.id = l.comment_id
    WHERE notifiable(c.user_id, l.user_id);
    RETURN NULL;
END
$$;
CREATE TRIGGER comment_likes_notify AFTER INSERT ON comment_likes REFERENCING NEW TABLE AS new_likes
    FOR EACH STATEMENT EXECUTE FUNCTION comment_likes_notify();

CREATE FUNCTION comment_likes_unnotify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM notifications n USING old_likes l JOIN comments c ON c.id = l.comment_id
    WHERE n.post_id = c.post_id AND n.actor_id = l.user_id AND n.comment_id = l.comment_id AND n.type = 'comment.liked';
    RETURN NULL;
END
$$;
CREATE TRIGGER comment_likes_unnotify AFTER DELETE ON comment_likes REFERENCING OLD TABLE AS old_likes
    FOR EACH STATEMENT EXECUTE FUNCTION comment_likes_unnotify();

-- Follows: `followed` to the followee; an unfollow (or a block's) takes it back.
CREATE FUNCTION follows_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO notifications (recipient_id, actor_id, type)
    SELECT f.followee_id, f.follower_id, 'followed' FROM new_follows f
    WHERE notifiable(f.followee_id, f.follower_id);
    RETURN NULL;
END
$$;
CREATE TRIGGER follows_notify AFTER INSERT ON follows REFERENCING NEW TABLE AS new_follows
    FOR EACH STATEMENT EXECUTE FUNCTION follows_notify();

CREATE FUNCTION follows_unnotify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM notifications n USING old_follows f
    WHERE n.actor_id = f.follower_id AND n.recipient_id = f.followee_id AND n.type = 'followed';
    RETURN NULL;
END
$$;
CREATE TRIGGER follows_unnotify AFTER DELETE ON follows REFERENCING OLD TABLE AS old_follows
    FOR EACH STATEMENT EXECUTE FUNCTION follows_unnotify();

-- New comments: `mentioned` to each user its body names, `comment.replied` to the author of
-- the comment a reply joins, `post.commented` to the post's author; one notification per
-- person and comment, the first of these that applies. (A deleted comment's go by the
-- cascade.)
CREATE FUNCTION comments_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO notifications (recipient_id, actor_id, type, post_id, comment_id)
    SELECT DISTINCT ON (t.comment_id, t.recipient_id) t.recipient_id, t.actor_id, t.type, t.post_id, t.comment_id
    FROM (
        SELECT (m ->> 'user_id')::bigint AS recipient_id, c.user_id AS actor_id, 'mentioned' AS type,
               c.post_id, c.id AS comment_id, 1 AS priority
        FROM new_comments c, json_array_elements(c.mentions) m WHERE c.mentions IS NOT NULL
        UNION ALL
        SELECT top.user_id, c.user_id, 'comment.replied', c.post_id, c.id, 2
        FROM new_comments c JOIN comments top ON top.id = c.reply_to
        UNION ALL
        SELECT p.user_id, c.user_id, 'post.commented', c.post_id, c.id, 3
        FROM new_comments c JOIN posts p ON p.id = c.post_id
    ) t
    WHERE notifiable(t.recipient_id, t.actor_id)
    ORDER BY t.comment_id, t.recipient_id, t.priority;
    RETURN NULL;
END
$$;
CREATE TRIGGER comments_notify AFTER INSERT ON comments REFERENCING NEW TABLE AS new_comments
    FOR EACH STATEMENT EXECUTE FUNCTION comments_notify();

-- New posts: `mentioned` to each user they name, `post.replied` to the parent's author.
CREATE FUNCTION posts_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO notifications (recipient_id, actor_id, type, post_id)
    SELECT DISTINCT ON (t.post_id, t.recipient_id) t.recipient_id, t.actor_id, t.type, t.post_id
    FROM (
        SELECT (m ->> 'user_id')::bigint AS recipient_id, p.user_id AS actor_id, 'mentioned' AS type,
               p.id AS post_id, 1 AS priority
        FROM new_posts p, json_array_elements(p.mentions) m WHERE p.mentions IS NOT NULL AND NOT p.deleted
        UNION ALL
        SELECT parent.user_id, p.user_id, 'post.replied', p.id, 2
        FROM new_posts p JOIN posts parent ON parent.id = p.parent_id WHERE NOT p.deleted
    ) t
    WHERE notifiable(t.recipient_id, t.actor_id)
    ORDER BY t.post_id, t.recipient_id, t.priority;
    RETURN NULL;
END
$$;
CREATE TRIGGER posts_notify AFTER INSERT ON posts REFERENCING NEW TABLE AS new_posts
    FOR EACH STATEMENT EXECUTE FUNCTION posts_notify();

-- An edit that names someone new notifies them; one who is no longer named loses theirs.
-- Row by row, and only when the mentions changed (most edits leave them alone).
CREATE FUNCTION posts_mentions_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM notifications n
    WHERE n.post_id = NEW.id AND n.type = 'mentioned'
      AND n.recipient_id NOT IN (SELECT (m ->> 'user_id')::bigint FROM json_array_elements(coalesce(NEW.mentions, '[]')) m);
    INSERT INTO notifications (recipient_id, actor_id, type, post_id)
    SELECT DISTINCT (m ->> 'user_id')::bigint, NEW.user_id, 'mentioned', NEW.id
    FROM json_array_elements(coalesce(NEW.mentions, '[]')) m
    WHERE notifiable((m ->> 'user_id')::bigint, NEW.user_id)
      AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.post_id = NEW.id AND n.recipient_id = (m ->> 'user_id')::bigint);
    RETURN NULL;
END
$$;
CREATE TRIGGER posts_mentions_changed AFTER UPDATE OF mentions ON posts
    FOR EACH ROW WHEN (OLD.mentions::text IS DISTINCT FROM NEW.mentions::text AND NOT NEW.deleted)
    EXECUTE FUNCTION posts_mentions_changed();

-- The cascades: a deleted post's, comment's and user's notifications (however deleted: a
-- subtree, a moderator's removal, an account's deletion, a parent's cascade).
CREATE FUNCTION notifications_posts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM notifications n USING old_posts p WHERE n.post_id = p.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER notifications_posts_deleted AFTER DELETE ON posts REFERENCING OLD TABLE AS old_posts
    FOR EACH STATEMENT EXECUTE FUNCTION notifications_posts_deleted();

CREATE FUNCTION notifications_comments_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM notifications n USING old_comments c WHERE n.post_id = c.post_id AND n.comment_id = c.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER notifications_comments_deleted AFTER DELETE ON comments REFERENCING OLD TABLE AS old_comments
    FOR EACH STATEMENT EXECUTE FUNCTION notifications_comments_deleted();

CREATE FUNCTION notifications_users_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM notifications n USING old_users u WHERE n.recipient_id = u.id;
    DELETE FROM notifications n USING old_users u WHERE n.actor_id = u.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER notifications_users_deleted AFTER DELETE ON users REFERENCING OLD TABLE AS old_users
    FOR EACH STATEMENT EXECUTE FUNCTION notifications_users_deleted();
