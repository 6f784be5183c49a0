import Foundation
import HTTP
import Postgres

/// `/api/dev/clock` (API.md "The clock"), trust mode only: the clock every instance on the
/// database shares. The setting is one row of `dev_clock` (none: real time); a change is
/// saved and announced (`DevState.channel`) in one statement, applied here at once, and by
/// every other instance when the announcement reaches it (`DevState`).
struct DevClock: Sendable {
    let pool: ConnectionPool
    let clock: ServerClock

    /// The stored setting.
    static func read(on connection: PostgresConnection) throws -> ServerClock.Setting {
        guard let row = try connection.query("""
            SELECT offset_ms, floor(extract(epoch FROM frozen_at) * 1000)::bigint AS frozen_at FROM dev_clock
            """).first else { return .real }
        return ServerClock.Setting(offsetMilliseconds: try row.decode("offset_ms"), frozenAt: try row.decode("frozen_at"))
    }

    /// Sets the clock to `now` (nil: where it stands), frozen or running (nil: as it is).
    func set(now: Date?, frozen: Bool?) throws {
        try save(to: now.map { "\($0)::timestamptz" } ?? "c.at", frozen: frozen)
    }

    /// Moves the clock by `seconds`; back only while it stands still (a running clock that
    /// went back would hand out times already handed out).
    func advance(seconds: Double) throws {
        try save(to: "c.at + make_interval(secs => \(seconds))", frozen: nil, onlyIfFrozen: seconds < 0)
    }

    /// Back to real time.
    func reset() throws {
        try pool.withConnection { connection in
            try connection.query("""
                WITH gone AS (DELETE FROM dev_clock RETURNING 1)
                SELECT pg_notify(\(DevState.channel), 'clock')
                """)
        }
        refreshAfterCommit()
    }

    /// Reads the clock back after this instance changed it: in force here at once. The
    /// change has committed: a failed read must not answer 503 (a retried advance would
    /// move the clock twice); the announcement brings it here soon all the same.
    private func refreshAfterCommit() {
        let ticket = DevState.ticket()
        if let setting = try? pool.withConnection({ try Self.read(on: $0) }) { clock.apply(setting, read: ticket) }
    }

    /// The setting that puts the clock at `target` (SQL over `c.at`, where it stands now),
    /// frozen or running, saved and announced; then read back here (`refreshAfterCommit`).
    /// `onlyIfFrozen`: refused (422) unless the stored clock stands still.
    private func save(to target: SQLQuery, frozen: Bool?, onlyIfFrozen: Bool = false) throws {
        let real = ServerClock.realNow
        do {
            try saved(to: target, frozen: frozen, onlyIfFrozen: onlyIfFrozen, real: real)
        } catch let error as PostgresError where error.sqlState?.rawValue == "22008" {
            throw APIError.invalid("that time is outside what the database keeps (4713 BC to 294276 AD)")
        }
        refreshAfterCommit()
    }

    private func saved(to target: SQLQuery, frozen: Bool?, onlyIfFrozen: Bool, real: SQLQuery) throws {
        try pool.withConnection { connection in
            guard try connection.query("""
                WITH c AS (
                    SELECT coalesce(d.frozen_at, \(real) + make_interval(secs => d.offset_ms / 1000.0), \(real)) AS at,
                           d.frozen_at IS NOT NULL AS frozen
                    FROM (SELECT 1) one LEFT JOIN dev_clock d ON true
                ), t AS (
                    SELECT \(target) AS at, coalesce(\(frozen), c.frozen, false) AS frozen FROM c
                ), saved AS (
                    INSERT INTO dev_clock (singleton, offset_ms, frozen_at)
                    SELECT true, floor(extract(epoch FROM t.at - \(real)) * 1000)::bigint, CASE WHEN t.frozen THEN t.at END FROM t
                    WHERE NOT \(onlyIfFrozen) OR t.frozen
                    ON CONFLICT (singleton) DO UPDATE SET offset_ms = excluded.offset_ms, frozen_at = excluded.frozen_at
                    RETURNING offset_ms, frozen_at
                )
                SELECT offset_ms, floor(extract(epoch FROM frozen_at) * 1000)::bigint AS frozen_at,
                       pg_notify(\(DevState.channel), 'clock') IS NULL AS announced
                FROM saved
                """).first != nil else { throw APIError.invalid("seconds may be negative only while the clock is frozen") }
        }
    }

    /// `{"clock":{"now","frozen","offset_seconds"}}` as this instance's clock stands.
    func answer() -> Response {
        let now = clock.millisecondsSince1970
        let real = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        var object = JSONObject()
        object.add("now", Timestamp.format(millisecondsSince1970: now))
        object.add("frozen", clock.setting.frozenAt != nil)
        object.add("offset_seconds", Double(now - real) / 1000)
        var answer = JSONObject.success()
        answer.add("clock", object)
        return answer.response()
    }
}
