-- For apps' test suites (API.md "For apps' test suites"): the dev clock and faults, kept
-- here so that every instance on the database shares them. Each change is announced on
-- the channel `posts_server_dev` ('clock' or 'faults'); an instance also reads both when it
-- (re)connects its listener, so none misses one. Used only in trust mode: a token-mode
-- server never reads them. `POST /api/dev/reset` empties both like every other table.

-- The clock: one row at most. No row: real time. `frozen_at` set: time stands still there;
-- else `offset_ms` is added to real time.
CREATE TABLE dev_clock (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    offset_ms bigint NOT NULL DEFAULT 0,
    frozen_at timestamptz
);

-- Faults, oldest first. `considered` counts the matching requests seen so far (what a
-- seeded probability picks by), `hits` those it was applied to (capped by `times`).
CREATE TABLE dev_faults (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    method text,
    path text NOT NULL,
    status int,
    latency_ms int NOT NULL DEFAULT 0,
    drop_connection boolean NOT NULL DEFAULT false,
    after_commit boolean NOT NULL DEFAULT false,
    times int,
    probability double precision,
    seed bigint NOT NULL DEFAULT 0,
    considered bigint NOT NULL DEFAULT 0,
    hits bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL
);

-- A new tag is stamped with the server's clock (`ServerClock`), like every row the server
-- makes, not the database's own: the clock may be set or frozen.
DROP FUNCTION tag_ids(text[]);
CREATE FUNCTION tag_ids(names text[], stamped timestamptz) RETURNS TABLE (tag_id bigint, tag_name text)
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tags (name, created_at) SELECT DISTINCT n, stamped FROM unnest(names) n ORDER BY n ON CONFLICT (name) DO NOTHING;
    RETURN QUERY SELECT t.id, t.name FROM tags t WHERE t.name = ANY(names);
END $$;
