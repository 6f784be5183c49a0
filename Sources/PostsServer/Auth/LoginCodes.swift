import HTTP
import Postgres

/// Sign-in codes: six digits from the system's CSPRNG, valid ten minutes, stored only as a
/// SHA-256 of "email:code", dead after five wrong attempts, at most five per address an
/// hour. Every statement runs in the caller's transaction. Their times (a code's life, the
/// hour of the limit) are the server clock's, the code's stamps included.
struct LoginCodes: Sendable {
    let clock: ServerClock

    static let lifetimeMinutes = 10
    static let maxAttempts = 5
    static let maxPerHour = 5

    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let number = Int.random(in: 0..<1_000_000, using: &generator)
        let digits = String(number)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// Stores a new code for the address, unless it had its five this hour: then the number
    /// of seconds until it may have another.
    func store(_ code: String, for email: EmailAddress, on connection: PostgresConnection) throws -> Int? {
        // One address at a time, so that two requests at once cannot both be the fifth.
        try connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\("login-code:" + email.value), 0))")
        let recent = try connection.query("""
            SELECT count(*) AS sent,
                   ceil(extract(epoch FROM min(created_at) + interval '1 hour' - \(clock.now)))::int AS wait
            FROM login_codes WHERE email = \(email.value) AND created_at > \(clock.now) - interval '1 hour'
            """).firstRow()
        if try recent.decode("sent", as: Int.self) >= Self.maxPerHour {
            return max(1, try recent.decode("wait", as: Int?.self) ?? 1)
        }
        try connection.query("""
            INSERT INTO login_codes (email, code_hash, created_at, expires_at)
            VALUES (\(email.value), sha256(convert_to(\(email.value + ":" + code), 'UTF8')), \(clock.now),
                    \(clock.now) + make_interval(mins => \(Int32(Self.lifetimeMinutes))))
            """)
        return nil
    }

    enum Check {
        case accepted
        case rejected
    }

    /// Checks a code against the address's live codes. A match uses up every live code of
    /// the address; a miss counts an attempt against each (five kill a code).
    func check(_ code: String, for email: EmailAddress, on connection: PostgresConnection) throws -> Check {
        let live = try connection.query("""
            SELECT id, code_hash = sha256(convert_to(\(email.value + ":" + code), 'UTF8')) AS matches
            FROM login_codes
            WHERE email = \(email.value) AND used_at IS NULL AND attempts < \(Self.maxAttempts) AND expires_at > \(clock.now)
            FOR UPDATE
            """).rows
        if try live.contains(where: { try $0.decode("matches", as: Bool.self) }) {
            try connection.query("UPDATE login_codes SET used_at = \(clock.now) WHERE email = \(email.value) AND used_at IS NULL")
            return .accepted
        }
        let ids: [Int64] = try live.map { try $0.decode("id") }
        if !ids.isEmpty {
            try connection.query("UPDATE login_codes SET attempts = attempts + 1 WHERE id = ANY(\(PostgresArray(ids)))")
        }
        return .rejected
    }
}
