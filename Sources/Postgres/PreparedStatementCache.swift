/// Which statements one connection has prepared, under which names: a bounded
/// least-recently-used map from (SQL text, parameter types) to a server-side name.
///
/// The parameter types are part of the key because PostgreSQL fixes them at PREPARE time:
/// the same text bound first with an `Int32` and then with an `Int64` is two statements,
/// and sending int8 bytes to a statement prepared for int4 fails (22P03). The bound keeps
/// a server session's memory in check when queries are built with varying text (IN lists
/// of varying length). Names are never reused within a session, so a name still prepared
/// on the server (its DEALLOCATE not yet through) cannot clash with a new statement.
///
/// Behind a transaction-mode pooler (PgBouncer before 1.21, Supavisor) a named statement
/// would outlive the transaction on a server connection the next transaction may not get:
/// there the cache is `unnamed`. It keeps nothing, and every statement is parsed again as
/// PostgreSQL's unnamed statement, which lives only until the next Parse on the same
/// connection, in the same round trip.
struct PreparedStatementCache {
    struct Key: Hashable {
        let sql: String
        let parameterTypes: [UInt32]
    }

    private struct Entry {
        let name: String
        var lastUse: UInt64
    }

    let capacity: Int
    /// False behind a transaction-mode pooler: no statement is kept past its own Parse.
    let namesStatements: Bool
    private var entries: [Key: Entry] = [:]
    private var useCounter: UInt64 = 0
    private var namesIssued = 0

    init(capacity: Int, namesStatements: Bool = true) {
        self.capacity = max(1, capacity)
        self.namesStatements = namesStatements
    }

    var count: Int { entries.count }

    /// The statement's name if it is prepared, marking it as just used.
    mutating func name(for key: Key) -> String? {
        guard namesStatements, let index = entries.index(forKey: key) else { return nil }
        useCounter += 1
        entries.values[index].lastUse = useCounter
        return entries.values[index].name
    }

    /// A name no statement of this session has had.
    mutating func makeName() -> String {
        guard namesStatements else { return "" }
        defer { namesIssued += 1 }
        return "s\(namesIssued)"
    }

    /// Records a statement the server has just prepared. Returns the name of the statement
    /// it pushed out when the cache was full: the caller must DEALLOCATE it.
    mutating func insert(_ key: Key, name: String) -> String? {
        guard namesStatements else { return nil }
        var evicted: String?
        if entries[key] == nil, entries.count >= capacity {
            evicted = removeLeastRecentlyUsed()
        }
        useCounter += 1
        entries[key] = Entry(name: name, lastUse: useCounter)
        return evicted
    }

    /// Forgets everything: the session that held the statements is gone. Names start over
    /// too, since a new session has none.
    mutating func removeAll() {
        entries = [:]
        namesIssued = 0
    }

    /// A linear scan: it runs once per new statement beyond the capacity, which is rare next
    /// to lookups, and keeps each lookup a single hash probe.
    private mutating func removeLeastRecentlyUsed() -> String? {
        guard let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse }) else { return nil }
        entries[oldest.key] = nil
        return oldest.value.name
    }
}
