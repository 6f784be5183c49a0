-- Snapshots for apps' test suites (API.md "Snapshots"), trust mode only: a copy of every
-- table's rows, the sequences and the stored images, in tables named `dev_snapshot…`,
-- which `POST /api/dev/reset` and a restore leave alone. (Not a schema of their own: a
-- role that may create tables but not schemas must still be able to migrate.) A
-- token-mode server never reads them.

CREATE TABLE dev_snapshots (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    -- The schema it was taken of: a restore after another migration is refused.
    migration text NOT NULL,
    users int NOT NULL,
    posts int NOT NULL,
    bytes bigint NOT NULL DEFAULT 0
);

CREATE TABLE dev_snapshot_sequences (
    snapshot_id bigint NOT NULL REFERENCES dev_snapshots(id) ON DELETE CASCADE,
    name text NOT NULL,
    last_value bigint NOT NULL,
    is_called boolean NOT NULL,
    PRIMARY KEY (snapshot_id, name)
);

CREATE TABLE dev_snapshot_images (
    snapshot_id bigint NOT NULL REFERENCES dev_snapshots(id) ON DELETE CASCADE,
    name text NOT NULL,
    bytes bytea NOT NULL,
    PRIMARY KEY (snapshot_id, name)
);

-- Counts restores: each instance drops its caches and ends its streams when it sees the
-- count move (announced on `posts_server_dev` like the clock and the faults).
CREATE TABLE dev_snapshot_restores (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    generation bigint NOT NULL
);

-- The tables a snapshot holds: every table of the current schema but the migrations' and
-- the dev clock's and faults' (test controls, not data).
CREATE FUNCTION dev_snapshot_data_tables() RETURNS SETOF name
LANGUAGE sql STABLE AS $$
    SELECT tablename FROM pg_tables
    WHERE schemaname = current_schema() AND tablename NOT IN ('schema_migrations', 'dev_clock', 'dev_faults')
      AND tablename NOT LIKE 'dev\_snapshot%'

    ORDER BY tablename
$$;

-- Copies every data table into `dev_snapshot_<id>_<table>` and the sequences' positions, with writes
-- held off meanwhile (SHARE locks wait for the writes in flight): exactly one moment.
CREATE FUNCTION dev_snapshot_save(snapshot bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    t name;
    s record;
    v record;
BEGIN
    FOR t IN SELECT * FROM dev_snapshot_data_tables() LOOP
        EXECUTE format('LOCK TABLE %I IN SHARE MODE', t);
    END LOOP;
    FOR t IN SELECT * FROM dev_snapshot_data_tables() LOOP
        EXECUTE format('CREATE TABLE %I AS SELECT * FROM %I', 'dev_snapshot_' || snapshot || '_' || t, t);
    END LOOP;
    FOR s IN SELECT sequencename FROM pg_sequences WHERE schemaname = current_schema() LOOP
        EXECUTE format('SELECT last_value, is_called FROM %I', s.sequencename) INTO v;
        INSERT INTO dev_snapshot_sequences (snapshot_id, name, last_value, is_called)
        VALUES (snapshot, s.sequencename, v.last_value, v.is_called);
    END LOOP;
END $$;

-- Drops a snapshot's copies (its row goes with the caller's DELETE).
CREATE FUNCTION dev_snapshot_drop_copies(snapshot bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    t name;
BEGIN
    FOR t IN SELECT tablename FROM pg_tables
             WHERE schemaname = current_schema() AND tablename LIKE 'dev\_snapshot\_' || snapshot || '\_%' LOOP
        EXECUTE format('DROP TABLE %I', t);
    END LOOP;
END $$;

-- Puts every data table back as the snapshot holds it, in one transaction: every table
-- locked (waiting for the writes in flight), emptied and filled again, triggers and
-- foreign-key checks off for it (the rows were consistent when saved), the sequences where
-- they were. Needs a role that may set session_replication_role (a superuser's, as the
-- dev server's and the tests' are).
CREATE FUNCTION dev_snapshot_restore(snapshot bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    t name;
    tables text;
    columns text;
    s record;
BEGIN
    SET LOCAL session_replication_role = replica;
    SELECT string_agg(format('%I', d), ', ') INTO tables FROM dev_snapshot_data_tables() d;
    EXECUTE 'LOCK TABLE ' || tables || ' IN ACCESS EXCLUSIVE MODE';
    EXECUTE 'TRUNCATE ' || tables;
    FOR t IN SELECT * FROM dev_snapshot_data_tables() LOOP
        CONTINUE WHEN to_regclass(format('%I', 'dev_snapshot_' || snapshot || '_' || t)) IS NULL;
        SELECT string_agg(format('%I', a.attname), ', ' ORDER BY a.attnum) INTO columns
        FROM pg_attribute a
        WHERE a.attrelid = format('%I', t)::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
        EXECUTE format('INSERT INTO %I (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM %I',
                       t, columns, columns, 'dev_snapshot_' || snapshot || '_' || t);
    END LOOP;
    FOR s IN SELECT name, last_value, is_called FROM dev_snapshot_sequences WHERE snapshot_id = snapshot LOOP
        PERFORM setval(format('%I', s.name)::regclass, s.last_value, s.is_called);
    END LOOP;
END $$;
