import Postgres

/// The one way a write runs: in one transaction, the write's statements return what
/// happened (`Written`: its answer and its events), then `EventEffects` writes what
/// follows from the events, before the commit. A conflict (deadlock, serialization)
/// runs the whole of it again (`ConnectionPool.withTransaction`).
struct WritePath: Sendable {
    let pool: ConnectionPool
    let effects: EventEffects

    /// Runs `write` and its events' effects in one transaction; returns its answer.
    func run<Value>(_ write: (PostgresConnection) throws -> Written<Value>) throws -> Value {
        try pool.withTransaction { connection in
            let written = try write(connection)
            try effects.apply(written.events, on: connection)
            return written.value
        }
    }

    /// The effects of events a write made in a transaction of its own (one that composes
    /// several writes, such as a moderator's removal or an account's deletion).
    func apply(_ events: [DomainEvent], on connection: PostgresConnection) throws {
        try effects.apply(events, on: connection)
    }
}
