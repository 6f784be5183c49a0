-- API.md "Changes and live events": every write is also recorded as a change, in the same
-- transaction (a change exists if and only if its write committed).
--
-- Order and cursors: a change is keyed by (txid, position): the xid of the transaction that
-- wrote it, then a sequence number within the table. Readers deliver only changes whose
-- txid is below the xmin horizon of their snapshot, in key order: every transaction with a
-- smaller xid has ended, and any transaction still to write one gets a larger xid, so
-- nothing can ever appear behind a delivered key, and a cursor never skips (see
-- Sources/PostsServer/Changes/ChangeLog.swift for the whole argument).
CREATE TABLE changes (
    txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    position bigint GENERATED ALWAYS AS IDENTITY,
    type text NOT NULL,
    at timestamptz NOT NULL DEFAULT now(),
    post_id bigint,
    parent_id bigint,
    -- A reparent's former parent; `reparented` tells a former root (NULL) from no reparent.
    old_parent_id bigint,
    reparented boolean NOT NULL DEFAULT false,
    user_id bigint NOT NULL,
    -- The type's own fields (API.md's table), as one JSON object.
    data json NOT NULL,
    PRIMARY KEY (txid, position)
);
-- The three filters of /api/changes, each walked in key order. (Every index is paid on
-- every write: pruning walks the primary key instead of an index on `at`.)
CREATE INDEX changes_post_idx ON changes (post_id, txid, position) WHERE post_id IS NOT NULL;
CREATE INDEX changes_parent_idx ON changes (parent_id, txid, position);
CREATE INDEX changes_old_parent_idx ON changes (old_parent_id, txid, position) WHERE reparented;
CREATE INDEX changes_user_idx ON changes (user_id, txid, position);

-- The highest key pruning has removed: a cursor below it has missed changes (410).
CREATE TABLE changes_pruned (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    txid xid8 NOT NULL,
    position bigint NOT NULL
);

-- The objects a change carries, in API.md's JSON, built where the write happens (one
-- statement records the write and its change). The tests hold them equal to the answers
-- the routes give for the same rows. What they need from other rows is passed in, so that
-- each is a single expression PostgreSQL inlines into the (prepared) statement that calls
-- it: a function with a subquery is planned again on every call.
CREATE FUNCTION api_time(t timestamptz) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

CREATE FUNCTION profile_json(p profiles) RETURNS json LANGUAGE sql STABLE AS $$
    SELECT json_build_object('user_id', p.user_id, 'username', p.username, 'full_name', p.full_name,
                             'bio', p.bio, 'avatar_url', p.avatar_url, 'created_at', api_time(p.created_at))
$$;

CREATE FUNCTION post_json(p posts, author_name text) RETURNS json LANGUAGE sql STABLE AS $$
    SELECT json_build_object('id', p.id, 'user_id', p.user_id, 'parent_id', p.parent_id, 'title', p.title,
                             'summary', p.summary, 'body', p.body, 'image_url', p.image_url,
                             'created_at', api_time(p.created_at), 'timezone', p.timezone,
                             'location_tag', p.location_tag, 'ai_generated', p.ai_generated,
                             'author_name', author_name,
                             'child_count', p.child_count, 'like_count', p.like_count,
                             'comment_count', p.comment_count)
$$;

CREATE FUNCTION comment_json(c comments, author profiles) RETURNS json LANGUAGE sql STABLE AS $$
    SELECT json_build_object('id', c.id, 'post_id', c.post_id, 'user_id', c.user_id, 'body', c.body,
                             'created_at', api_time(c.created_at), 'profile', profile_json(author))
$$;

-- No trigger notifies the change feeds: NOTIFY takes a database-wide lock at commit, and
-- measured on like/unlike and comment-create it cost a quarter of their throughput. Each
-- instance's feed polls this table every 20 ms instead (one index probe), and is nudged
-- at once by its own instance's writes; a NOTIFY on `posts_server_changes`, from anyone,
-- still wakes the feeds (bench/events.sh, bench/write-cost.sh).
