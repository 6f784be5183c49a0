import Foundation

/// What a trust-mode server (`posts-server dev`) gives an app's test suite (API.md "For
/// apps' test suites"): snapshots of its data, its clock and its faults, each in force on every instance of the
/// server's database within a second. `notFound` from a server in token mode.
///
///     try await client.dev.restoreSnapshot("seeded")      // before each test
///     try await client.dev.advanceClock(by: 601)          // the sign-in code has expired
///     try await client.dev.addFault(FaultSpec("POST", "/api/posts", drop: true, afterCommit: true, times: 1))
extension PostsClient {
    public var dev: TestSuiteControls { TestSuiteControls(client: self) }
}

public struct TestSuiteControls: Sendable {
    let client: PostsClient

    // MARK: Snapshots

    /// Saves all the server's data under `name` (1–64 of A-Z, a-z, 0-9, `_`, `.`, `-`),
    /// replacing a snapshot of that name.
    @discardableResult
    public func saveSnapshot(_ name: String) async throws -> Snapshot {
        try await client.send(.json("POST", "/api/dev/snapshots", [("name", .string(name))]), as: SnapshotEnvelope.self).snapshot
    }

    /// Puts all the data back as the snapshot holds it (every instance's caches dropped,
    /// event streams ended, earlier change cursors gone).
    public func restoreSnapshot(_ name: String) async throws {
        _ = try await client.send(APIRequest("POST", "/api/dev/snapshots/\(name)/restore"), as: SuccessEnvelope.self)
    }

    public func snapshots() async throws -> [Snapshot] {
        try await client.send(APIRequest("GET", "/api/dev/snapshots"), as: SnapshotsEnvelope.self).snapshots
    }

    public func deleteSnapshot(_ name: String) async throws {
        _ = try await client.perform(APIRequest("DELETE", "/api/dev/snapshots/\(name)"))
    }

    // MARK: The clock

    /// The server's clock as it stands.
    public func clock() async throws -> ServerClockState {
        try await client.send(APIRequest("GET", "/api/dev/clock"), as: ClockEnvelope.self).clock
    }

    /// Sets the clock to `date` (nil: where it stands), frozen or running (nil: as it is).
    @discardableResult
    public func setClock(to date: Date? = nil, frozen: Bool? = nil) async throws -> ServerClockState {
        var fields: [(String, JSONValue)] = []
        if let date { fields.append(("now", .string(APIDateCoding.text(from: date)))) }
        if let frozen { fields.append(("frozen", .bool(frozen))) }
        return try await client.send(.json("PUT", "/api/dev/clock", fields), as: ClockEnvelope.self).clock
    }

    /// Moves the clock on by `seconds` (back only while it is frozen): what became due runs
    /// within a second.
    @discardableResult
    public func advanceClock(by seconds: Double) async throws -> ServerClockState {
        let body = try JSONEncoder().encode(["seconds": seconds])
        return try await client.send(APIRequest("POST", "/api/dev/clock/advance", body: .json(body)), as: ClockEnvelope.self).clock
    }

    /// Back to real time.
    @discardableResult
    public func realClock() async throws -> ServerClockState {
        try await client.send(APIRequest("DELETE", "/api/dev/clock"), as: ClockEnvelope.self).clock
    }

    // MARK: Faults

    /// Makes a fault for the requests it matches, on every instance.
    @discardableResult
    public func addFault(_ fault: FaultSpec) async throws -> Fault {
        let body = try JSONEncoder().encode(fault)
        return try await client.send(APIRequest("POST", "/api/dev/faults", body: .json(body)), as: FaultEnvelope.self).fault
    }

    /// The faults in force, oldest first, with their hits.
    public func faults() async throws -> [Fault] {
        try await client.send(APIRequest("GET", "/api/dev/faults"), as: FaultsEnvelope.self).faults
    }

    public func removeFault(id: Int64) async throws {
        _ = try await client.perform(APIRequest("DELETE", "/api/dev/faults/\(id)"))
    }

    public func removeAllFaults() async throws {
        _ = try await client.perform(APIRequest("DELETE", "/api/dev/faults"))
    }
}

/// A saved snapshot of the server's data.
public struct Snapshot: Decodable, Sendable, Equatable {
    public let name: String
    public let createdAt: Date
    public let users: Int
    public let posts: Int
    public let bytes: Int

    enum CodingKeys: String, CodingKey {
        case name, users, posts, bytes
        case createdAt = "created_at"
    }
}

/// `GET /api/dev/clock`.
public struct ServerClockState: Decodable, Sendable, Equatable {
    public let now: Date
    public let frozen: Bool
    /// Its `now` minus real time.
    public let offsetSeconds: Double

    enum CodingKeys: String, CodingKey {
        case now, frozen
        case offsetSeconds = "offset_seconds"
    }
}

/// A fault to make: which requests (a method, or any; a route pattern, `*` one segment,
/// `**` any number) and what happens to them.
public struct FaultSpec: Encodable, Sendable {
    public var method: String?
    public var path: String
    /// An error status of API.md's table, answered with its documented body.
    public var status: Int?
    public var latency: Duration?
    /// The connection is closed without an answer.
    public var drop: Bool
    /// The request is carried out, then its answer lost (replaced by `status` or `drop`).
    public var afterCommit: Bool
    public var times: Int?
    public var probability: Double?
    public var seed: Int64?

    public init(_ method: String? = nil, _ path: String, status: Int? = nil, latency: Duration? = nil, drop: Bool = false,
                afterCommit: Bool = false, times: Int? = nil, probability: Double? = nil, seed: Int64? = nil) {
        self.method = method
        self.path = path
        self.status = status
        self.latency = latency
        self.drop = drop
        self.afterCommit = afterCommit
        self.times = times
        self.probability = probability
        self.seed = seed
    }

    private enum Keys: String, CodingKey {
        case match, method, path, status, drop, times, probability, seed
        case latencyMilliseconds = "latency_ms"
        case afterCommit = "after_commit"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        var match = container.nestedContainer(keyedBy: Keys.self, forKey: .match)
        try match.encodeIfPresent(method, forKey: .method)
        try match.encode(path, forKey: .path)
        try container.encodeIfPresent(status, forKey: .status)
        if let latency {
            let (seconds, attoseconds) = latency.components
            try container.encode(seconds * 1000 + attoseconds / 1_000_000_000_000_000, forKey: .latencyMilliseconds)
        }
        try container.encode(drop, forKey: .drop)
        try container.encode(afterCommit, forKey: .afterCommit)
        try container.encodeIfPresent(times, forKey: .times)
        try container.encodeIfPresent(probability, forKey: .probability)
        try container.encodeIfPresent(seed, forKey: .seed)
    }
}

/// A fault the server keeps, with how many requests it has hit.
public struct Fault: Decodable, Sendable, Equatable {
    public struct Match: Decodable, Sendable, Equatable {
        public let method: String?
        public let path: String
    }

    public let id: Int64
    public let match: Match
    public let status: Int?
    public let latencyMilliseconds: Int
    public let drop: Bool
    public let afterCommit: Bool
    public let times: Int?
    public let probability: Double?
    public let seed: Int64
    public let hits: Int

    enum CodingKeys: String, CodingKey {
        case id, match, status, drop, times, probability, seed, hits
        case latencyMilliseconds = "latency_ms"
        case afterCommit = "after_commit"
    }
}

struct ClockEnvelope: Decodable { let clock: ServerClockState }
struct SnapshotEnvelope: Decodable { let snapshot: Snapshot }
struct SnapshotsEnvelope: Decodable { let snapshots: [Snapshot] }
struct FaultEnvelope: Decodable { let fault: Fault }
struct FaultsEnvelope: Decodable { let faults: [Fault] }
