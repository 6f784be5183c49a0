-- API.md "Federation: the fediverse (ActivityPub)". Off unless FEDERATION=on; these tables
-- stay empty then.

-- A remote account is a user with a profile like anyone here, so follows, likes, comments,
-- blocks, mutes and the visibility policy apply to it unchanged; this row says where it
-- lives. Its users.email is `<sha256 of its id>@remote.invalid` (RFC 2606: no mail can
-- reach it, so no one signs in as it), its username its `user@domain`.
CREATE TABLE remote_actors (
    user_id bigint PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    uri text NOT NULL UNIQUE,
    -- host[:port], lowercased: what domain blocks and the delivery's host state name.
    domain text NOT NULL,
    inbox text NOT NULL,
    shared_inbox text,
    followers_uri text,
    url text,
    key_id text NOT NULL,
    public_key_pem text NOT NULL,
    fetched_at timestamptz NOT NULL,
    -- When the key was last fetched: at most once a minute per actor (API.md).
    key_fetched_at timestamptz NOT NULL
);
CREATE INDEX remote_actors_domain_idx ON remote_actors (domain);
CREATE INDEX remote_actors_key_idx ON remote_actors (key_id);

-- `user@domain` of a remote account (NULL for ours): the profile's `acct` and `remote`.
ALTER TABLE profiles ADD COLUMN acct text;

-- Our actors' keys, made once per user on first need and kept; `user_id` NULL is the
-- instance actor's (who signs the instance's own fetches).
CREATE TABLE actor_keys (
    user_id bigint UNIQUE REFERENCES users(id) ON DELETE CASCADE,
    private_key_pem text NOT NULL,
    public_key_pem text NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX actor_keys_instance_key ON actor_keys ((user_id IS NULL)) WHERE user_id IS NULL;

-- A remote Note stored here, as a post or as a comment.
CREATE TABLE remote_objects (
    uri text PRIMARY KEY,
    actor_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    post_id bigint UNIQUE REFERENCES posts(id) ON DELETE CASCADE,
    comment_id uuid UNIQUE REFERENCES comments(id) ON DELETE CASCADE,
    CHECK ((post_id IS NULL) <> (comment_id IS NULL))
);

-- Activities received, by id: the same one delivered twice is acted on once.
CREATE TABLE inbox_activities (
    id text PRIMARY KEY,
    received_at timestamptz NOT NULL
);
CREATE INDEX inbox_activities_received_idx ON inbox_activities (received_at);

-- Our follows of remote accounts that wait for their Accept (then a follows row).
CREATE TABLE follow_requests (
    follower_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    followee_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (follower_id, followee_id)
);

-- What we send: each activity built once and delivered to each inbox by its own
-- `federation.deliver` job. `actor_id` NULL: the instance actor's.
CREATE TABLE outgoing_activities (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    actor_id bigint REFERENCES users(id) ON DELETE CASCADE,
    json text NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX outgoing_activities_created_idx ON outgoing_activities (created_at);

-- Hosts we deliver to: one that has failed for 7 days is skipped until it answers again
-- (or sends us something).
CREATE TABLE federation_hosts (
    domain text PRIMARY KEY,
    failing_since timestamptz,
    last_success_at timestamptz
);

-- API.md "Safety": a whole domain blocked or silenced by an admin.
CREATE TABLE domain_blocks (
    domain text PRIMARY KEY,
    action text NOT NULL CHECK (action IN ('block', 'silence')),
    note text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL
);

-- Our posts and comments deleted since they could have been sent: their ids answer `410`
-- with a Tombstone rather than `404`. `object_id`: `post:<id>` or `comment:<uuid>`.
CREATE TABLE federation_tombstones (
    object_id text PRIMARY KEY,
    post_id bigint,
    comment_id uuid,
    actor_id bigint,
    deleted_at timestamptz NOT NULL
);
