import HTTP
import Postgres

/// A create that honours `Idempotency-Key` (API.md "Retries"): the same key from the same
/// user within 24 hours answers the first answer again and creates nothing; the same key
/// with a different body is 422; while the first request with that key still runs, 409
/// with `Retry-After`. Both steps run inside the create's own transaction. The 24 hours are
/// the server clock's: the key's stamp is written from it, and judged by it.
struct IdempotentRequest: Sendable {
    let userID: Int64
    let key: String
    /// What makes two requests the same: method, path and fields (files by name and size).
    let fingerprint: String
    let clock: ServerClock

    static let maxKeyLength = 255

    /// The answer the first request with this key got: what a retry gets again.
    struct FirstAnswer: Sendable {
        let status: Int
        let body: [UInt8]
    }

    /// Nil when the request sent no key; 400 for a key that is empty, too long or not text.
    init?(_ request: Request, caller: Caller, fields: BodyFields, clock: ServerClock) throws(APIError) {
        guard let key = request.headers["Idempotency-Key"] else { return nil }
        guard !key.isEmpty, key.utf8.count <= Self.maxKeyLength, key.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw .malformed("Idempotency-Key must be 1 to \(Self.maxKeyLength) printable ASCII characters")
        }
        userID = caller.userID
        self.key = key
        let files = (request.form?.files ?? []).map { "\($0.fieldName):\($0.filename ?? ""):\($0.size)" }
        fingerprint = "\(request.method) \(request.path)\n\(fields.fingerprint)\n\(files.joined(separator: ","))"
        self.clock = clock
    }

    /// The first answer when this key was used before; nil to go on and create. Holds the
    /// key (a transaction-scoped advisory lock) until the transaction ends.
    func replay(on connection: PostgresConnection) throws -> FirstAnswer? {
        let locked: Bool = try connection.query("""
            SELECT pg_try_advisory_xact_lock(hashtextextended(\("idempotency:\(userID):\(key)"), 0)) AS locked
            """).firstRow().decode("locked", as: Bool.self)
        guard locked else {
            throw APIError(.conflict, "a request with this Idempotency-Key is still running", retryAfter: 1)
        }
        guard let row = try connection.query("""
            SELECT status, response, request_hash = sha256(convert_to(\(fingerprint), 'UTF8')) AS same
            FROM idempotency_keys
            WHERE user_id = \(userID) AND key = \(key) AND created_at > \(clock.now) - interval '24 hours'
            """).first else { return nil }
        guard try row.decode("same", as: Bool.self) else {
            throw APIError.invalid("this Idempotency-Key was used with a different request")
        }
        return FirstAnswer(status: try row.decode("status"), body: try row.decode("response"))
    }

    /// Stores the answer, API.md's 201 `{"status":"success","<key>":<resource>}`, with the
    /// key, in the transaction that made the resource.
    func record(_ resource: [UInt8], as resourceKey: String, on connection: PostgresConnection) throws {
        var answer = JSONObject.success()
        answer.addRaw(resourceKey, resource)
        try connection.query("""
            INSERT INTO idempotency_keys (user_id, key, request_hash, status, response, created_at)
            VALUES (\(userID), \(key), sha256(convert_to(\(fingerprint), 'UTF8')), \(Int32(201)),
                    \(answer.finished), \(clock.now))
            ON CONFLICT (user_id, key) DO UPDATE SET request_hash = excluded.request_hash, status = excluded.status,
                response = excluded.response, created_at = excluded.created_at
            """)
    }
}
