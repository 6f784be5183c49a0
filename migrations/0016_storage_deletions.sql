-- API.md "Storage for many instances": a stored image is removed after the commit that
-- dropped the last reference to it, through this durable queue. The triggers below queue
-- the old URL in the transaction that drops it, whatever path does (an edit, a delete, a
-- subtree's cascade, account deletion, a moderator's removal, an avatar replaced), so a
-- crash or a store outage after the commit delays the deletion and never loses it. Each
-- instance's deletion worker (StorageDeletions) claims due rows, deletes the image and its
-- sizes unless a post or profile still names the URL, and retries with backoff while the
-- store is down.
CREATE TABLE storage_deletions (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    url text NOT NULL,
    attempts int NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX storage_deletions_due_idx ON storage_deletions (next_attempt_at, id);

CREATE FUNCTION queue_image_deletion() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- TG_ARGV[0] names the column: image_url for posts, avatar_url for profiles.
    INSERT INTO storage_deletions (url) VALUES (to_jsonb(OLD) ->> TG_ARGV[0]);
    RETURN NULL;
END
$$;

-- Row triggers whose WHEN is checked without calling the function: a write that drops no
-- stored image (almost all of them) costs nothing here. Only URLs this server made
-- (`/uploads/…`) are queued.
CREATE TRIGGER posts_image_replaced AFTER UPDATE OF image_url ON posts FOR EACH ROW
    WHEN (OLD.image_url LIKE '/uploads/%' AND OLD.image_url IS DISTINCT FROM NEW.image_url)
    EXECUTE FUNCTION queue_image_deletion('image_url');
CREATE TRIGGER posts_image_deleted AFTER DELETE ON posts FOR EACH ROW
    WHEN (OLD.image_url LIKE '/uploads/%')
    EXECUTE FUNCTION queue_image_deletion('image_url');
CREATE TRIGGER profiles_avatar_replaced AFTER UPDATE OF avatar_url ON profiles FOR EACH ROW
    WHEN (OLD.avatar_url LIKE '/uploads/%' AND OLD.avatar_url IS DISTINCT FROM NEW.avatar_url)
    EXECUTE FUNCTION queue_image_deletion('avatar_url');
CREATE TRIGGER profiles_avatar_deleted AFTER DELETE ON profiles FOR EACH ROW
    WHEN (OLD.avatar_url LIKE '/uploads/%')
    EXECUTE FUNCTION queue_image_deletion('avatar_url');
