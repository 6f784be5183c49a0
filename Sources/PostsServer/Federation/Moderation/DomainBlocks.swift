import Foundation
import Postgres

/// API.md "Safety": an admin blocks or silences a whole domain. Blocked: nothing of it is
/// fetched, stored or accepted (its inbox requests `403`), and what waits to be delivered
/// there is dropped. Silenced: its accounts reach only those who follow them (a reply or
/// a like from one reaches a post only when its author follows them). Each change is in
/// the moderation log.
struct DomainBlocks: Sendable {
    let pool: ConnectionPool
    let clock: ServerClock

    enum Action: String, Sendable {
        case block, silence
    }

    /// `host[:port]`, lowercased: a name or an address, as `user@domain` gives it. 422 otherwise.
    static func validated(_ text: String) throws(APIError) -> String {
        let domain = (text.removingPercentEncoding ?? text).lowercased()
        guard (1...253).contains(domain.count), let parsed = RemoteActorDocument.domain(of: "https://\(domain)"), parsed == domain else {
            throw .invalid("not a domain: \(text)")
        }
        return domain
    }

    func list() throws -> [JSONObject] {
        try pool.withConnection { connection in
            try connection.query("SELECT domain, action, note, created_at FROM domain_blocks ORDER BY domain").rows.map(Self.entry)
        }
    }

    /// Sets the domain's action; a block drops the deliveries waiting for its inboxes.
    func set(_ domain: String, _ action: Action, note: String, by admin: Caller) throws -> JSONObject {
        try pool.withTransaction { connection in
            let row = try connection.query("""
                INSERT INTO domain_blocks (domain, action, note, created_at) VALUES (\(domain), \(action.rawValue), \(note), \(clock.now))
                ON CONFLICT (domain) DO UPDATE SET action = excluded.action, note = excluded.note
                RETURNING domain, action, note, created_at
                """).firstRow()
            if action == .block {
                try connection.query("""
                    DELETE FROM jobs j USING remote_actors ra
                    WHERE j.kind = \(JobKind.federationDeliver.name) AND ra.domain = \(domain)
                      AND j.payload ->> 'inbox' IN (ra.inbox, ra.shared_inbox)
                    """)
            }
            try ModerationLog.record("domain_\(action.rawValue)", target: "domain:\(domain)", note: note, by: admin, at: clock, on: connection)
            return try Self.entry(row)
        }
    }

    /// `{"domain","action","note","created_at"}`.
    private static func entry(_ row: PostgresRow) throws -> JSONObject {
        var entry = JSONObject()
        entry.add("domain", try row.decode("domain", as: String.self))
        entry.add("action", try row.decode("action", as: String.self))
        entry.add("note", try row.decode("note", as: String.self))
        entry.add("created_at", try row.decode("created_at", as: PostgresTimestamp.self))
        return entry
    }

    /// Lifts it: false when the domain had none.
    func remove(_ domain: String, by admin: Caller) throws -> Bool {
        try pool.withTransaction { connection in
            let removed = try connection.query("DELETE FROM domain_blocks WHERE domain = \(domain)").affectedRows > 0
            if removed {
                try ModerationLog.record("domain_unblock", target: "domain:\(domain)", note: "", by: admin, at: clock, on: connection)
            }
            return removed
        }
    }
}
