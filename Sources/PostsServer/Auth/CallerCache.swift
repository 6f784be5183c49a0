import Locking
import Postgres

/// The callers this instance looked up, by what named them (a bearer token, or trust
/// mode's email), so that a request need not look its caller up again before its work.
///
/// Never trusted on its own: a remembered caller comes with its proof, a condition that
/// raises (`caller_refuted()`, migration 0020) when the user is gone or suspended, its
/// blocks or mutes moved on (`relations_version`), the token was revoked (`Tokens.proof`,
/// `Accounts.proof`; a token whose last use is due to be written is read afresh instead,
/// `Entry.renewalDue`). The proof is built once per entry. It is checked on the primary,
/// as a statement of its own in the same round trip as the request's first statement there
/// (`Precondition`, `CallerProofStage`), also when the request's reads go to a replica:
/// when it raises, nothing of the request was done, and the request is run again with the
/// caller read afresh. So the cache can be wrong only for the length of one statement, like
/// the lookup it replaces, whichever instance made the change and however far a replica
/// lags; and it costs a request no round trip of its own.
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
        /// A token's: when (ms on the `ServerClock`) its last use is due to be written again;
        /// from then on the caller is read afresh, which writes it (or finds the token
        /// expired). Checked in memory, so that the proof is the same for every request.
        var renewalDue: Int64?
        /// What proves the entry still current, built once when it is remembered (`Identity`).
        var proof: Precondition.Statement?
    }

    /// Two generations: lookups fill `young`; when it holds `capacity / 2` entries it
    /// becomes `old` (the previous old is dropped) and a new young one starts. A caller
    /// found in `old` moves back to `young`. So memory stays bounded and a busy caller is
    /// never forgotten all at once with everyone else (emptying one full map made every
    /// caller of a loaded instance look itself up again in the same moment).
    private struct Generations {
        var young: [String: Entry] = [:]
        var old: [String: Entry] = [:]
    }

    private let generations = ParkingLock(Generations())
    /// At most this many entries in both generations together.
    private let capacity: Int

    init(capacity: Int = 20_000) {
        self.capacity = max(2, capacity)
    }

    func entry(_ key: String) -> Entry? {
        generations.withLock { generations in
            if let entry = generations.young[key] { return entry }
            guard let entry = generations.old.removeValue(forKey: key) else { return nil }
            Self.add(entry, as: key, to: &generations, capacity: capacity)
            return entry
        }
    }

    func remember(_ entry: Entry, as key: String) {
        generations.withLock { generations in
            generations.old[key] = nil
            Self.add(entry, as: key, to: &generations, capacity: capacity)
        }
    }

    /// Forgets every caller (a restored snapshot: what was remembered may be of rows gone).
    func removeAll() {
        generations.withLock { $0 = Generations() }
    }

    func forget(_ key: String) {
        generations.withLock { generations in
            generations.young[key] = nil
            generations.old[key] = nil
        }
    }

    /// How many callers it holds now (both generations).
    var count: Int { generations.withLock { $0.young.count + $0.old.count } }

    private static func add(_ entry: Entry, as key: String, to generations: inout Generations, capacity: Int) {
        if generations.young[key] == nil && generations.young.count >= capacity / 2 {
            generations.old = generations.young
            generations.young = [:]
            generations.young.reserveCapacity(capacity / 2)
        }
        generations.young[key] = entry
    }
}
