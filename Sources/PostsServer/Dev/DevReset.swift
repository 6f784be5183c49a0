import Postgres

/// `POST /api/dev/reset`: every table but `schema_migrations` and the snapshots'
/// (`dev_snapshot…`, which outlive it) emptied (identities restarted), and every stored
/// image removed: a clean slate between an app's test runs.
/// Change cursors stay sound across it: keys grow with transaction ids, which a reset does
/// not restart, so a follower from before it sees the changes after it and nothing else.
struct DevReset: Sendable {
    let pool: ConnectionPool
    let images: ImageStore

    func run() throws {
        // One statement, safe to repeat: run again when it deadlocks with a background
        // statement that reads several of the tables it truncates (a feed fan-out, the
        // pruner's sweep), as it did once in API conformance.
        try pool.withRetriedStatement { connection in
            // The names come from the catalog, quoted by format('%I'); nothing from a request.
            try connection.execute(unsafeSQL: """
                DO $$
                DECLARE tables text;
                BEGIN
                    SELECT string_agg(format('%I.%I', schemaname, tablename), ', ') INTO tables
                    FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'
                      AND tablename NOT LIKE 'dev\\_snapshot%';
                    IF tables IS NOT NULL THEN
                        EXECUTE 'TRUNCATE ' || tables || ' RESTART IDENTITY CASCADE';
                    END IF;
                END
                $$
                """)
        }
        try images.removeAll()
    }
}
