import HTTP
import Postgres

/// A user always sees what they just did, with reads served by replicas (API.md "Many
/// databases"): every answer to a write names where in the primary's log it ended
/// (`Read-After`), and a read sets its floor (`DatabaseSession.readFloor`, in the request's
/// `AppContext.session`) to the most recent of
/// - the `Read-After` a client sent back (PostsClient does; opaque to clients, the log
///   position as text), on any instance;
/// - the last write through this instance of its caller, and for an anonymous read, of
///   its client address by a caller named in a write's body: the firefly app names its
///   user in the body of a write and reads anonymously, so only its address ties its
///   reads to its writes (`RecentWriters`). Only such writes mark an address: one whose
///   other clients write with a token or header (a carrier's shared address, a load
///   test) would send all its anonymous reads to the primary.
/// - for a caller read afresh from the primary (a session of a moment ago), where the
///   primary's log was just after: what made the session is older than that.
/// - the changes position a client took (`GET /api/changes` without `since`), for its
///   caller or, anonymous, its address: the full fetch that follows must find everything
///   before it. (Unlike an anonymous write, this marks the address: it is one request per
///   full sync, and a shared address's other anonymous reads go to the primary only for
///   the memory's while.)
/// A write's own reads go to the primary (it may read what it wrote before the commit
/// position is known). Without replicas nothing is measured and the token is `0/0`.
final class ReadYourWrites: Sendable {
    static let header = "Read-After"
    /// Read nowhere but the primary.
    static let primaryOnly = LogSequenceNumber(value: .max)
    /// `primaryOnly` as a token: not a log position, so a client keeping the later of two
    /// tokens replaces it with the next write's (a position would outrank every later one).
    static let primaryOnlyToken = "primary"

    private let pool: ConnectionPool
    private let users: RecentWriters<Int64>?
    private let addresses: RecentWriters<String>?

    init(pool: ConnectionPool) {
        self.pool = pool
        // As long as a replica that takes reads may lack a write: one within the lag limit
        // when last measured, which stopped replaying then, is trusted for as long again as
        // that measurement is (and a second for the monitor's round).
        let keep = pool.replicas.map { $0.maxLag + $0.measurementTrusted + .seconds(1) }
        users = keep.map { RecentWriters(keep: $0) }
        addresses = keep.map { RecentWriters(keep: $0) }
    }

    /// The floor of a request's reads; nil: any replica within the lag limit.
    func floor(of request: Request, caller: Caller?, callerReadAfresh: Bool, address: String) -> LogSequenceNumber? {
        guard let users, let addresses else { return nil }
        if request.method != .GET && request.method != .HEAD { return Self.primaryOnly }
        var floor = caller == nil ? addresses.position(of: address) : nil
        if let token = request.head.headers[Self.header] {
            // One we did not make (or from a newer server) cannot be judged: the primary can.
            guard let position = LogSequenceNumber(token) else { return Self.primaryOnly }
            floor = max(floor ?? .zero, position)
        }
        if let caller {
            if callerReadAfresh {
                // Unknown position (the primary unreachable a moment): the primary decides.
                let now = (try? primaryPosition()) ?? Self.primaryOnly
                users.remember(caller.userID, wroteUpTo: now)
            }
            if let written = users.position(of: caller.userID) { floor = max(floor ?? .zero, written) }
        }
        return floor
    }

    /// After a write succeeded: its token, remembered for its caller (and its address when
    /// the caller was named in the body). The
    /// write is in whatever happens here: a position that cannot be read now makes the token
    /// one only the primary satisfies (never a failed answer to a write that committed).
    func written(by caller: Caller?, namedInBody: Bool, address: String) -> String {
        guard let users, let addresses else { return LogSequenceNumber.zero.description }
        let position = (try? primaryPosition()) ?? Self.primaryOnly
        if let caller { users.remember(caller.userID, wroteUpTo: position) }
        if namedInBody { addresses.remember(address, wroteUpTo: position) }
        return Self.token(position)
    }

    /// A token past everything committed so far, for an answer read from the primary
    /// (changes): a client's next reads see all it named; nil without replicas. With
    /// `rememberingFor`, the position is also remembered as if the caller (or the address,
    /// anonymous) had written there: a client that takes the changes position and then
    /// fetches everything must find all that came before it, token or not.
    func currentToken(rememberingFor caller: Caller? = nil, address: String? = nil) -> String? {
        guard let users, let addresses else { return nil }
        let position = (try? primaryPosition()) ?? Self.primaryOnly
        if let caller {
            users.remember(caller.userID, wroteUpTo: position)
        } else if let address {
            addresses.remember(address, wroteUpTo: position)
        }
        return Self.token(position)
    }

    private static func token(_ position: LogSequenceNumber) -> String {
        position == primaryOnly ? primaryOnlyToken : position.description
    }

    /// Where the primary's log is now: past the end of every transaction committed before.
    /// The insert position, not `pg_current_wal_lsn()` (the written one): with
    /// `synchronous_commit = off` a COMMIT returns before its record is written, and a
    /// replica that had replayed up to the written position could still lack it. (The
    /// insert position may be a little past the commit; such a read waits for the next
    /// flush or goes to the primary, never to a replica without the write.)
    private func primaryPosition() throws -> LogSequenceNumber {
        let text: String = try pool.withConnection {
            try $0.query("SELECT pg_current_wal_insert_lsn()::text AS position").firstRow().decode("position")
        }
        guard let position = LogSequenceNumber(text) else {
            throw PostgresError(.decoding, details: "unreadable log position \(text)")
        }
        return position
    }
}

/// Sets each request's read floor and gives each write's answer its `Read-After`.
struct ReadYourWritesStage: RequestStage {
    let reads: ReadYourWrites

    func handle(_ request: Request, _ context: inout AppContext, next: AppHandler) throws -> Response {
        let address = context.http.remoteAddress
        let floor = reads.floor(of: request, caller: context.caller,
                                callerReadAfresh: context.caller != nil && context.callerProof == nil, address: address)
        context.session.readFloor = floor
        var response = try next(request, &context)
        if request.method != .GET && request.method != .HEAD && (200..<300).contains(response.status.code) {
            response.headers.add(ReadYourWrites.header,
                                 reads.written(by: context.caller, namedInBody: context.callerNamedInBody, address: address))
        }
        return response
    }
}
