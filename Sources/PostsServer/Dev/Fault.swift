import Foundation
import HTTP
import Postgres

/// One fault an app's test suite asked for (API.md "Faults"): which requests it matches
/// (method, route pattern), what it does to them (latency, a status, a dropped connection,
/// before or after the request is carried out), and how many and which (times, a seeded
/// probability). A value: parsed from a request, read from a row, matched in memory.
struct Fault: Sendable, Equatable {
    let id: Int64
    let method: String?
    let path: String
    let status: Int?
    let latencyMilliseconds: Int
    let drop: Bool
    let afterCommit: Bool
    let times: Int?
    let probability: Double?
    let seed: Int64
    var hits: Int64 = 0

    /// The longest latency a fault may add: a worker waits it out.
    static let maxLatencyMilliseconds = 30_000
    static let methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
    /// The statuses it may answer: API.md's error table.
    static let statuses: Set<Int> = [400, 401, 403, 404, 409, 410, 413, 415, 422, 429, 500, 503]

    /// Whether it applies to a request for `path` (the path alone, no query) by `method`.
    /// Never to `/api/dev/*`.
    func matches(method requestMethod: String, path requestPath: String) -> Bool {
        guard !Self.isDevPath(requestPath) else { return false }
        if let method, method != requestMethod { return false }
        return Self.pattern(path, matches: requestPath)
    }

    static func isDevPath(_ path: String) -> Bool {
        path == "/api/dev" || path.hasPrefix("/api/dev/")
    }

    /// A route pattern against a path: `*` is one segment, `**` zero or more; anything else
    /// is itself.
    static func pattern(_ pattern: String, matches path: String) -> Bool {
        let want = pattern.split(separator: "/", omittingEmptySubsequences: true)
        let have = path.split(separator: "/", omittingEmptySubsequences: true)
        // The positions in `want` still possible after each segment of `have` (no recursion:
        // a pattern of many `**` costs no more than one).
        var positions: Set<Int> = closure([0], over: want)
        for segment in have {
            var next: Set<Int> = []
            for position in positions where position < want.count {
                switch want[position] {
                case "**": next.insert(position)
                case "*": next.insert(position + 1)
                case let literal where literal == segment: next.insert(position + 1)
                default: break
                }
            }
            positions = closure(next, over: want)
            if positions.isEmpty { return false }
        }
        return positions.contains(want.count)
    }

    /// Adds the positions after each `**` that may match nothing.
    private static func closure(_ positions: Set<Int>, over want: [Substring]) -> Set<Int> {
        var result = positions
        var pending = Array(positions)
        while let position = pending.popLast() {
            if position < want.count, want[position] == "**", !result.contains(position + 1) {
                result.insert(position + 1)
                pending.append(position + 1)
            }
        }
        return result
    }

    /// `{"fault":{…}}`'s object.
    var json: JSONObject {
        var match = JSONObject()
        match.add("method", method)
        match.add("path", path)
        var object = JSONObject()
        object.add("id", id)
        object.add("match", match)
        object.add("status", status.map(Int64.init))
        object.add("latency_ms", latencyMilliseconds)
        object.add("drop", drop)
        object.add("after_commit", afterCommit)
        object.add("times", times.map(Int64.init))
        object.add("probability", probability)
        object.add("seed", seed)
        object.add("hits", hits)
        return object
    }
}

extension Fault {
    /// What `POST /api/dev/faults` takes.
    struct Input: Decodable {
        struct Match: Decodable {
            let method: String?
            let path: String?
        }

        let match: Match?
        let status: Int?
        let latency_ms: Int?
        let drop: Bool?
        let after_commit: Bool?
        let times: Int?
        let probability: Double?
        let seed: Int64?
    }

    /// A new fault (id 0) from a request's input; 422 for values outside what it can do.
    init(_ input: Input) throws(APIError) {
        guard let match = input.match, let path = match.path else { throw .invalid("match.path is required") }
        guard path.hasPrefix("/"), path.utf8.count <= 512, !path.contains("?") else {
            throw .invalid("match.path must be a route pattern such as /api/posts/*/like")
        }
        let method = match.method?.uppercased()
        if let method, !Self.methods.contains(method) {
            throw .invalid("match.method must be one of \(Self.methods.sorted().joined(separator: ", "))")
        }
        if let status = input.status, !Self.statuses.contains(status) {
            throw .invalid("status must be one of \(Self.statuses.sorted().map(String.init).joined(separator: ", "))")
        }
        let latency = input.latency_ms ?? 0
        guard (0...Self.maxLatencyMilliseconds).contains(latency) else {
            throw .invalid("latency_ms must be 0 to \(Self.maxLatencyMilliseconds)")
        }
        let drop = input.drop ?? false
        let afterCommit = input.after_commit ?? false
        guard input.status != nil || drop || latency > 0 else {
            throw .invalid("a fault needs a status, drop or latency_ms")
        }
        guard !(drop && input.status != nil) else { throw .invalid("drop and status cannot go together") }
        guard !afterCommit || input.status != nil || drop else {
            throw .invalid("after_commit needs a status or drop: what the lost answer is replaced by")
        }
        if let times = input.times, !(1...Int(Int32.max)).contains(times) {
            throw .invalid("times must be 1 to \(Int32.max)")
        }
        if let probability = input.probability, !(probability > 0 && probability <= 1) {
            throw .invalid("probability must be above 0 and at most 1")
        }
        self.init(id: 0, method: method, path: path, status: input.status, latencyMilliseconds: latency, drop: drop,
                  afterCommit: afterCommit, times: input.times, probability: input.probability, seed: input.seed ?? 0)
    }

    /// From a `dev_faults` row.
    init(row: PostgresRow) throws {
        self.init(id: try row.decode("id"), method: try row.decode("method"), path: try row.decode("path"),
                  status: try row.decode("status", as: Int32?.self).map(Int.init),
                  latencyMilliseconds: Int(try row.decode("latency_ms", as: Int32.self)),
                  drop: try row.decode("drop_connection"), afterCommit: try row.decode("after_commit"),
                  times: try row.decode("times", as: Int32?.self).map(Int.init), probability: try row.decode("probability"),
                  seed: try row.decode("seed"), hits: try row.decode("hits"))
    }
}
