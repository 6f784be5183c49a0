import Foundation
import Postgres

/// `/api/dev/snapshots` (API.md "Snapshots"), trust mode only: every table's rows, the
/// sequences and the stored images, saved under a name and put back in one transaction. The
/// copies live in tables named `dev_snapshot…` (migrations 0027 and 0028, whose functions
/// do the copying by the catalog), which a reset and a restore leave alone. A restore of
/// the snapshot the data last equalled puts back only the rows written since (0028). A
/// restore also marks every change cursor handed out before it as gone (410: the follower
/// resyncs), counts itself in `dev_snapshot_restores` and announces it, so that every
/// instance drops its caches and ends its streams (`DevState`).
struct DevSnapshots: Sendable {
    let pool: ConnectionPool
    let clock: ServerClock
    let images: ImageStore
    /// This instance's part of a restore, once it has committed (caches, streams).
    let restores: RestoreObservers

    struct Summary: Sendable {
        let name: String
        let createdAt: PostgresTimestamp
        let users: Int64
        let posts: Int64
        let bytes: Int64

        var json: JSONObject {
            var object = JSONObject()
            object.add("name", name)
            object.add("created_at", createdAt)
            object.add("users", users)
            object.add("posts", posts)
            object.add("bytes", bytes)
            return object
        }

        init(row: PostgresRow) throws {
            name = try row.decode("name")
            createdAt = try row.decode("created_at")
            users = Int64(try row.decode("users", as: Int32.self))
            posts = Int64(try row.decode("posts", as: Int32.self))
            bytes = try row.decode("bytes")
        }
    }

    private static let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-".utf8)

    /// 1–64 of `[A-Za-z0-9_.-]`; 422 otherwise.
    static func validated(_ name: String?) throws(APIError) -> String {
        guard let name, (1...64).contains(name.utf8.count),
              name.utf8.allSatisfy(Self.allowed.contains)
        else { throw .invalid("name must be 1 to 64 of A-Z, a-z, 0-9, _, . and -") }
        return name
    }

    /// Saves everything as it is now under `name` (replacing a snapshot of that name).
    func save(_ name: String) throws -> Summary {
        let id = try pool.withLongTransaction(limit: Self.patience) { connection -> Int64 in
            if let old: Int64 = try connection.query("SELECT id FROM dev_snapshots WHERE name = \(name)").first?.decode("id") {
                try connection.query("SELECT dev_snapshot_drop_copies(\(old)) IS NULL AS dropped")
                try connection.query("DELETE FROM dev_snapshots WHERE id = \(old)")
            }
            let id: Int64 = try connection.query("""
                INSERT INTO dev_snapshots (name, created_at, migration, users, posts)
                VALUES (\(name), \(clock.now), (SELECT max(version) FROM schema_migrations), 0, 0) RETURNING id
                """).firstRow().decode("id")
            try connection.query("SELECT dev_snapshot_save(\(id)) IS NULL AS saved")
            // The tables are held still by the save's locks: these are the saved counts.
            try connection.query("""
                UPDATE dev_snapshots SET users = (SELECT count(*) FROM users), posts = (SELECT count(*) FROM posts)
                WHERE id = \(id)
                """)
            return id
        }
        // The stored images after the rows: they are never changed, only added and removed,
        // so every image the saved rows name is there still (a deletion waits for its job).
        try saveImages(of: id)
        return try pool.withConnection { connection in
            try Summary(row: connection.query("""
                UPDATE dev_snapshots s SET bytes = (
                    SELECT coalesce(sum(pg_total_relation_size(format('%I', t.tablename)::regclass)), 0)
                    FROM pg_tables t WHERE t.schemaname = current_schema() AND t.tablename LIKE 'dev\\_snapshot\\_' || s.id || '\\_%'
                ) + (SELECT coalesce(sum(length(i.bytes)), 0) FROM dev_snapshot_images i WHERE i.snapshot_id = s.id)
                WHERE s.id = \(id)
                RETURNING s.*
                """).firstRow())
        }
    }

    private func saveImages(of id: Int64) throws {
        var marker: String?
        repeat {
            let page = try images.store.list(after: marker)
            for name in page.names {
                guard let stored = StoredImageName(name) else { continue }
                guard let bytes = try images.withLocalCopy(of: stored, { try Data(contentsOf: URL(fileURLWithPath: $0)) }) else {
                    continue
                }
                try pool.withConnection { connection in
                    try connection.query("""
                        INSERT INTO dev_snapshot_images (snapshot_id, name, bytes) VALUES (\(id), \(name), \(bytes))
                        ON CONFLICT DO NOTHING
                        """)
                }
            }
            marker = page.next
        } while marker != nil
    }

    func list() throws -> [Summary] {
        try pool.withConnection { connection in
            try connection.query("SELECT * FROM dev_snapshots ORDER BY created_at, id").rows.map(Summary.init(row:))
        }
    }

    /// False when there is no snapshot of that name.
    func delete(_ name: String) throws -> Bool {
        try pool.withTransaction { connection in
            guard let id: Int64 = try connection.query("SELECT id FROM dev_snapshots WHERE name = \(name)").first?.decode("id")
            else { return false }
            try connection.query("SELECT dev_snapshot_drop_copies(\(id)) IS NULL AS dropped")
            try connection.query("DELETE FROM dev_snapshots WHERE id = \(id)")
            return true
        }
    }

    /// Puts everything back as the snapshot `name` holds it; 404 for no such snapshot, 409
    /// for one taken before a migration since.
    func restore(_ name: String) throws {
        let (id, generation) = try pool.withLongTransaction(limit: Self.patience) { connection -> (Int64, Int64) in
            guard let row = try connection.query("""
                SELECT id, migration = (SELECT max(version) FROM schema_migrations) AS current
                FROM dev_snapshots WHERE name = \(name)
                """).first else { throw APIError.notFound("no snapshot named \(name)") }
            guard try row.decode("current", as: Bool.self) else {
                throw APIError.conflict("the snapshot \(name) was taken before a migration since: save it again")
            }
            let id: Int64 = try row.decode("id")
            try connection.query("SELECT dev_snapshot_restore(\(id)) IS NULL AS restored")
            // Every cursor handed out before this transaction is gone from here on: what it
            // points after no longer exists (a follower resyncs, as after pruning).
            try connection.query("""
                INSERT INTO changes_pruned (txid, position) VALUES (pg_current_xact_id(), \(Int64.max))
                ON CONFLICT (singleton) DO UPDATE SET txid = excluded.txid, position = excluded.position
                """)
            let generation: Int64 = try connection.query("""
                INSERT INTO dev_snapshot_restores (generation) VALUES (1)
                ON CONFLICT (singleton) DO UPDATE SET generation = dev_snapshot_restores.generation + 1
                RETURNING generation
                """).firstRow().decode("generation")
            try connection.query("SELECT pg_notify(\(DevState.channel), 'restore') IS NULL AS announced")
            return (id, generation)
        }
        restores.fire(generation: generation)
        try restoreImages(of: id)
    }

    /// The stored images made equal to the snapshot's by their difference: an image is
    /// never changed under its name, so one of a saved name is the saved image. Those the
    /// snapshot lacks go with their sizes; those it has and the store lacks are written.
    private func restoreImages(of id: Int64) throws {
        let saved: Set<String> = try pool.withConnection { connection in
            Set(try connection.query("SELECT name FROM dev_snapshot_images WHERE snapshot_id = \(id)").rows
                .map { try $0.decode("name") })
        }
        let savedBases = Set(saved.compactMap { StoredImageName($0)?.base })
        var present: Set<String> = []
        var marker: String?
        repeat {
            let page = try images.store.list(after: marker)
            var extra: [String] = []
            for name in page.names {
                if saved.contains(name) {
                    present.insert(name)
                } else if StoredImageName(name) != nil
                            || (StoredImageName.isSizeName(name) && !savedBases.contains(String(name.prefix(32)))) {
                    extra.append(name)
                }
            }
            try images.store.delete(extra)
            marker = page.next
        } while marker != nil
        for name in saved.subtracting(present).sorted() {
            guard let stored = StoredImageName(name) else { continue }
            let bytes: [UInt8]? = try pool.withConnection { connection in
                try connection.query("SELECT bytes FROM dev_snapshot_images WHERE snapshot_id = \(id) AND name = \(name)")
                    .first?.decode("bytes")
            }
            guard let bytes else { continue }
            let scratch = images.scratchPath(".upload-\(UUID().uuidString).restore.part")
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            try Data(bytes).write(to: URL(fileURLWithPath: scratch))
            _ = try images.store.put(name, from: scratch, contentType: stored.format.contentType, ifAbsent: false)
        }
    }

    /// A save or a full restore of many rows takes longer than a request's statement (a
    /// save of 100,000 posts, 765 MB of copies: 4.4 s on a quiet machine, more on a busy one).
    static let patience: Duration = .seconds(300)
}
