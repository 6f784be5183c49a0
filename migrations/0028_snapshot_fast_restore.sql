-- Restores in milliseconds (issue 43): put back only what changed since the data last
-- equalled a snapshot, instead of emptying and refilling every table.
--
-- The idea: a save or a restore is a moment at which the data equals a snapshot. It takes
-- EXCLUSIVE locks on every data table first (waiting for every transaction that wrote or
-- locked a row of one), and only then its transaction id (`dev_snapshot_base.xid`). Every
-- later write gets a later transaction id, so a row whose xmin is newer than the base is
-- one written since, and a row of the base that was deleted or updated since is missing:
-- the table holds fewer rows from before the base than the snapshot does. A restore of the
-- base's snapshot deletes the newer rows and inserts the snapshot's rows whose primary key
-- is then missing; a table with neither is left alone. (A restore of another snapshot, or
-- a first one, empties and refills every table as before.) A save has its id before its
-- locks (from its own row in dev_snapshots): rows committed in between count as newer,
-- and a restore deletes them and puts them back from the copy, which is only more work.
-- The caveat: a transaction whose id came from a table outside the data (the dev clock's
-- or faults') before the base and that writes data after it would be taken for the base's;
-- the server has none.

CREATE TABLE dev_snapshot_tables (
    snapshot_id bigint NOT NULL REFERENCES dev_snapshots(id) ON DELETE CASCADE,
    name text NOT NULL,
    rows bigint NOT NULL,
    PRIMARY KEY (snapshot_id, name)
);

-- The snapshot the data equalled at the transaction `xid`, and nothing since but what is
-- newer than it.
CREATE TABLE dev_snapshot_base (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    snapshot_id bigint NOT NULL REFERENCES dev_snapshots(id) ON DELETE CASCADE,
    xid xid8 NOT NULL
);

-- Every data table locked against writes and row locks (reads go on), then this
-- transaction's id: the moment the data equals what the caller then saves or restores.
CREATE FUNCTION dev_snapshot_hold_still() RETURNS xid8
LANGUAGE plpgsql AS $$
DECLARE
    tables text;
BEGIN
    SELECT string_agg(format('%I', d), ', ') INTO tables FROM dev_snapshot_data_tables() d;
    EXECUTE 'LOCK TABLE ' || tables || ' IN EXCLUSIVE MODE';
    RETURN pg_current_xact_id();
END $$;

CREATE OR REPLACE FUNCTION dev_snapshot_save(snapshot bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    t name;
    s record;
    v record;
    base xid8;
    saved bigint;
BEGIN
    base := dev_snapshot_hold_still();
    FOR t IN SELECT * FROM dev_snapshot_data_tables() LOOP
        EXECUTE format('CREATE TABLE %I AS SELECT * FROM %I', 'dev_snapshot_' || snapshot || '_' || t, t);
        GET DIAGNOSTICS saved = ROW_COUNT;
        INSERT INTO dev_snapshot_tables (snapshot_id, name, rows) VALUES (snapshot, t, saved);
    END LOOP;
    FOR s IN SELECT sequencename FROM pg_sequences WHERE schemaname = current_schema() LOOP
        EXECUTE format('SELECT last_value, is_called FROM %I', s.sequencename) INTO v;
        INSERT INTO dev_snapshot_sequences (snapshot_id, name, last_value, is_called)
        VALUES (snapshot, s.sequencename, v.last_value, v.is_called);
    END LOOP;
    INSERT INTO dev_snapshot_base (snapshot_id, xid) VALUES (snapshot, base)
    ON CONFLICT (singleton) DO UPDATE SET snapshot_id = excluded.snapshot_id, xid = excluded.xid;
END $$;

-- A table's columns that take values (not generated ones), quoted and listed in order.
CREATE FUNCTION dev_snapshot_columns(t name) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT string_agg(format('%I', a.attname), ', ' ORDER BY a.attnum)
    FROM pg_attribute a
    WHERE a.attrelid = format('%I', t)::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
$$;

-- Inserts the snapshot's rows of a table (all of them, or those whose primary key the table
-- lacks) as they were saved, identities included.
CREATE FUNCTION dev_snapshot_insert_saved(snapshot bigint, t name, missing_only boolean) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    copy text := 'dev_snapshot_' || snapshot || '_' || t;
    columns text := dev_snapshot_columns(t);
    keys text;
BEGIN
    IF to_regclass(format('%I', copy)) IS NULL THEN RETURN; END IF;
    IF NOT missing_only THEN
        EXECUTE format('INSERT INTO %I (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM %I', t, columns, columns, copy);
        RETURN;
    END IF;
    SELECT string_agg(format('t.%1$I = c.%1$I', a.attname), ' AND ') INTO keys
    FROM pg_index i CROSS JOIN unnest(i.indkey) k(attnum)
    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
    WHERE i.indrelid = format('%I', t)::regclass AND i.indisprimary;
    EXECUTE format('INSERT INTO %I (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM %I c WHERE NOT EXISTS (SELECT FROM %I t WHERE %s)',
                   t, columns, columns, copy, t, keys);
END $$;

-- Puts one table back from its copy by what changed since the base: the rows newer than it
-- deleted, the saved rows then missing inserted. A table with more rows from before the
-- base than the snapshot has (the restore's own mark on the change cursors, written in the
-- base's transaction) is emptied and refilled.
CREATE FUNCTION dev_snapshot_restore_changed(snapshot bigint, t name, base xid8, saved bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    newer bigint;
    older bigint;
BEGIN
    EXECUTE format('SELECT count(*) FILTER (WHERE age(xmin) < age($1)), count(*) FILTER (WHERE age(xmin) >= age($1)) FROM %I', t)
        INTO newer, older USING base::xid;
    IF older > saved THEN
        EXECUTE format('DELETE FROM %I', t);
        PERFORM dev_snapshot_insert_saved(snapshot, t, false);
        RETURN;
    END IF;
    IF newer > 0 THEN
        EXECUTE format('DELETE FROM %I WHERE age(xmin) < age($1)', t) USING base::xid;
    END IF;
    IF older < saved THEN
        PERFORM dev_snapshot_insert_saved(snapshot, t, true);
    END IF;
END $$;

-- Puts every data table back as the snapshot holds it, in one transaction, triggers and
-- foreign-key checks off for it (the rows were consistent when saved), the sequences where
-- they were; only the changed tables' changed rows when the data last equalled this
-- snapshot, else every table emptied and refilled. Needs a role that may set
-- session_replication_role (a superuser's, as the dev server's and the tests' are).
CREATE OR REPLACE FUNCTION dev_snapshot_restore(snapshot bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    t name;
    tables text;
    s record;
    base xid8;
BEGIN
    SET LOCAL session_replication_role = replica;
    PERFORM dev_snapshot_hold_still();
    SELECT b.xid INTO base FROM dev_snapshot_base b WHERE b.snapshot_id = snapshot;
    -- Every table's saved count is known (a save since migration 0028 made it).
    IF base IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM dev_snapshot_data_tables() d
        WHERE NOT EXISTS (SELECT 1 FROM dev_snapshot_tables st WHERE st.snapshot_id = snapshot AND st.name = d)
    ) THEN
        FOR s IN SELECT st.name, st.rows FROM dev_snapshot_data_tables() d
                 JOIN dev_snapshot_tables st ON st.snapshot_id = snapshot AND st.name = d LOOP
            PERFORM dev_snapshot_restore_changed(snapshot, s.name, base, s.rows);
        END LOOP;
    ELSE
        SELECT string_agg(format('%I', d), ', ') INTO tables FROM dev_snapshot_data_tables() d;
        EXECUTE 'TRUNCATE ' || tables;
        FOR t IN SELECT * FROM dev_snapshot_data_tables() LOOP
            PERFORM dev_snapshot_insert_saved(snapshot, t, false);
        END LOOP;
    END IF;
    FOR s IN SELECT name, last_value, is_called FROM dev_snapshot_sequences WHERE snapshot_id = snapshot LOOP
        PERFORM setval(format('%I', s.name)::regclass, s.last_value, s.is_called);
    END LOOP;
    -- From here on the data equals this snapshot but for what commits after this transaction.
    INSERT INTO dev_snapshot_base (snapshot_id, xid) VALUES (snapshot, pg_current_xact_id())
    ON CONFLICT (singleton) DO UPDATE SET snapshot_id = excluded.snapshot_id, xid = excluded.xid;
END $$;
