-- One write path (issue 30): who is notified of what, the home feed's fan-out and the
-- posts_count counter move out of triggers into the server's Swift, where every write
-- returns its events and one place (Sources/PostsServer/Events/EventEffects.swift) turns
-- them into changes, notifications, push jobs and feed rows, in the write's transaction.
-- What stays in SQL guards integrity only: the cascades of the tables that have no
-- foreign keys (feed_entries, notifications; see 0013 and 0015 for why they have none).

-- Notifications: written by the write path, their rules in NotificationRules.swift.
DROP TRIGGER likes_notify ON likes;
DROP FUNCTION likes_notify();
DROP TRIGGER likes_unnotify ON likes;
DROP FUNCTION likes_unnotify();
DROP TRIGGER comment_likes_notify ON comment_likes;
DROP FUNCTION comment_likes_notify();
DROP TRIGGER comment_likes_unnotify ON comment_likes;
DROP FUNCTION comment_likes_unnotify();
DROP TRIGGER follows_notify ON follows;
DROP FUNCTION follows_notify();
DROP TRIGGER follows_unnotify ON follows;
DROP FUNCTION follows_unnotify();
DROP TRIGGER comments_notify ON comments;
DROP FUNCTION comments_notify();
DROP TRIGGER posts_notify ON posts;
DROP FUNCTION posts_notify();
DROP TRIGGER posts_mentions_changed ON posts;
DROP FUNCTION posts_mentions_changed();
-- A notification's private change and its push job are the write path's too.
DROP TRIGGER notifications_inserted ON notifications;
DROP FUNCTION notifications_inserted();
DROP FUNCTION notification_json(notifications);
DROP FUNCTION notifiable(bigint, bigint);

-- A new post's fan-out and its author's posts_count: the write path's.
DROP TRIGGER posts_inserted ON posts;
DROP FUNCTION posts_inserted();

-- Removed posts, however removed (a subtree, a moderator's removal, an account's
-- deletion, a parent's cascade): their rows in the home feeds. (posts_count is kept by
-- the writes that remove them.)
CREATE OR REPLACE FUNCTION posts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM feed_entries fe USING old_posts p WHERE fe.post_id = p.id;
    RETURN NULL;
END
$$;

-- A post handed to another user (a deleted account's tombstone) leaves every feed.
CREATE OR REPLACE FUNCTION posts_author_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM feed_entries WHERE post_id = NEW.id;
    RETURN NULL;
END
$$;

-- The change feed's private changes now also say that a user's blocks or mutes changed
-- (`relations.changed`, never shown): only `notification` ones reach the notification
-- streams, which read this index.
DROP INDEX changes_recipient_idx;
CREATE INDEX changes_recipient_idx ON changes (recipient_id, txid, position)
    WHERE recipient_id IS NOT NULL AND type = 'notification';
