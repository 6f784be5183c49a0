import Locking
import Postgres

/// The callers this instance looked up, by what named them (a bearer token, or trust
/// mode's email), so that a request need not look its caller up again before its work.
///
/// Never trusted on its own: a remembered caller comes with its proof, a condition that
/// raises (`caller_refuted()`, migration 0020) when the user is gone or suspended, its
/// blocks or mutes moved on (`relations_version`), the token was revoked or is due to have
/// its last use written (`Tokens.proof`, `Accounts.proof`). It travels with the request's
/// first statement (`Precondition`, `CallerProofStage`): when it raises, that statement
/// did nothing, and the request is run again with the caller read afresh. So the cache can
/// be wrong only for the length of one statement, like the lookup it replaces, whichever
/// instance made the change; and it costs a request no round trip of its own.
///
/// Why: the lookup was one round trip of two for most reads, 33–40% of an authenticated
/// read's throughput against the same read made anonymously (issue 31's figures).
final class CallerCache: Sendable {
    /// What PostgreSQL answers when a remembered caller is no longer current.
    static let refuted = SQLState(rawValue: "PC001")

    struct Entry: Sendable {
        let caller: Caller
        let relationsVersion: Int64
        /// Trust mode's: the address the caller was found by (its proof checks it still is).
        var email: String?
    }

    private let entries = ParkingLock([String: Entry]())
    /// Beyond it the cache starts over: bounded memory whatever the number of callers.
    private let capacity: Int

    init(capacity: Int = 20_000) {
        self.capacity = capacity
    }

    func entry(_ key: String) -> Entry? {
        entries.withLock { $0[key] }
    }

    func remember(_ entry: Entry, as key: String) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = entry
        }
    }

    func forget(_ key: String) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }
}
