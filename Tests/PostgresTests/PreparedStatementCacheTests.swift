@testable import Postgres
import Testing
import TestSupport

@Suite struct PreparedStatementCacheTests {
    private func key(_ sql: String, _ types: [PostgresType] = []) -> PreparedStatementCache.Key {
        PreparedStatementCache.Key(sql: sql, parameterTypes: types.map(\.rawValue))
    }

    @Test func sameTextWithOtherParameterTypes_isAnotherStatement() {
        var cache = PreparedStatementCache(capacity: 4)
        _ = cache.insert(key("SELECT $1", [.int4]), name: cache.makeName())
        #expect(cache.name(for: key("SELECT $1", [.int4])) != nil)
        #expect(cache.name(for: key("SELECT $1", [.int8])) == nil)
    }

    @Test func full_evictsTheLeastRecentlyUsed() {
        var cache = PreparedStatementCache(capacity: 2)
        _ = cache.insert(key("a"), name: "s0")
        _ = cache.insert(key("b"), name: "s1")
        _ = cache.name(for: key("a"))
        #expect(cache.insert(key("c"), name: "s2") == "s1")
        #expect(cache.name(for: key("a")) == "s0")
        #expect(cache.name(for: key("b")) == nil)
        #expect(cache.count == 2)
    }

    @Test func names_areNeverReusedWithinASession() {
        var cache = PreparedStatementCache(capacity: 1)
        var names: Set<String> = []
        for index in 0..<10 {
            let name = cache.makeName()
            names.insert(name)
            _ = cache.insert(key("q\(index)"), name: name)
        }
        #expect(names.count == 10)
    }

    // Against the server.

    @Test func sameSQL_boundAsInt32ThenInt64AndBack() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.makeDatabase())
        #expect(try connection.query("SELECT \(Int32(7)) AS v").first!.decode("v", as: Int64.self) == 7)
        #expect(try connection.query("SELECT \(Int64.max) AS v").first!.decode("v", as: Int64.self) == .max)
        #expect(try connection.query("SELECT \(Int32(-3)) AS v").first!.decode("v", as: Int64.self) == -3)
    }

    @Test func serverSideCount_staysWithinTheBound_andEvictedStatementsComeBack() throws {
        let capacity = 4
        let connection = try PostgresConnection(conninfo: TestDatabase.makeDatabase(), preparedStatementCapacity: capacity)
        func preparedCount() throws -> Int {
            try connection.query("SELECT count(*) AS n FROM pg_prepared_statements").first!.decode("n")
        }
        for round in 0..<3 {
            for number in 0..<10 {
                // Distinct text per number: each is a statement of its own.
                let value: Int = try connection.query("SELECT \(number) + \(unsafeSQL: String(number)) AS v").first!.decode("v")
                #expect(value == 2 * number, "round \(round)")
                #expect(try preparedCount() <= capacity + 1)
            }
        }
        #expect(connection.statements.count <= capacity)
    }

    @Test func reset_forgetsTheStatements() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.makeDatabase())
        for number in 0..<3 { try connection.query("SELECT \(unsafeSQL: String(number)) AS v") }
        try connection.reset()
        #expect(connection.statements.count == 0)
        #expect(try connection.query("SELECT 1 AS v").first!.decode("v", as: Int.self) == 1)
        #expect(try connection.query("SELECT count(*) AS n FROM pg_prepared_statements").first!.decode("n", as: Int.self) == 2)
    }
}
