import PostsServer

/// Retention without waiting for it: what the pruner does once every change is older than
/// `CHANGES_RETENTION`, so that a test can see a cursor fall behind it (410).
public enum ChangeRetention {
    /// Removes every change and records the newest as pruned, as the pruner would.
    public static func pruneEverything(in app: Application) throws {
        try app.pool.withConnection { connection in
            _ = try connection.query("""
                WITH gone AS (DELETE FROM changes RETURNING txid, position),
                     highest AS (SELECT txid, position FROM gone ORDER BY txid DESC, position DESC LIMIT 1)
                INSERT INTO changes_pruned (txid, position) SELECT txid, position FROM highest
                ON CONFLICT (singleton) DO UPDATE SET txid = excluded.txid, position = excluded.position
                """)
        }
    }
}
