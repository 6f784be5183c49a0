import Locking
import Postgres

/// Each user's blocks and mutes as last read, by `users.relations_version`: the query that
/// resolves a caller reads the version only (one column of a row it reads anyway), and
/// the sets are read again only when the version is one this server has not seen. Without
/// any block or mute (version 0) nothing is read or kept. A version that moved on another
/// instance is seen on the next request: the cache is never stale.
final class RelationsCache: Sendable {
    private struct Entry {
        let version: Int64
        let relations: Relations
    }

    private let entries = ParkingLock([Int64: Entry]())
    /// At most this many users' sets are kept (beyond it the cache starts over): bounded
    /// memory whatever the number of users.
    private let capacity: Int

    init(capacity: Int = 20_000) {
        self.capacity = capacity
    }

    /// Forgets every user's sets (a restored snapshot moves versions back).
    func removeAll() {
        entries.withLock { $0 = [:] }
    }

    func relations(of userID: Int64, version: Int64, on connection: PostgresConnection) throws -> Relations {
        guard version != 0 else { return Relations() }
        if let entry = entries.withLock({ $0[userID] }), entry.version == version { return entry.relations }
        let relations = try Relations.read(of: userID, on: connection)
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            // A newer version another request stored meanwhile stays.
            if let kept = entries[userID], kept.version > version { return }
            entries[userID] = Entry(version: version, relations: relations)
        }
        return relations
    }
}
