import Foundation
import Postgres
import Testing
import TestSupport

/// The wrapper against the real PostgreSQL of the test run.
@Suite struct PostgresConnectionTests {
    private func connect() throws -> PostgresConnection {
        try PostgresConnection(conninfo: TestDatabase.makeDatabase())
    }

    @Test(arguments: ["", "plain", "x'); DROP TABLE posts; --", "$1 ? :name \\ \" '", "héllo wörld 👩‍👩‍👧", "line\nbreak\ttab"])
    func hostileStrings_roundTripUnchanged(_ text: String) throws {
        let connection = try connect()
        let back: String = try connection.query("SELECT \(text)::text AS value").first!.decode("value")
        #expect(back == text)
        #expect(try connection.query("SELECT count(*) AS n FROM posts").first!.decode("n", as: Int.self) == 0)
    }

    /// A statement expected to answer a row that answers none is an error to handle (the
    /// request fails), not a trap that takes the process and every connection down.
    @Test func firstRow_ofAnEmptyResult_isADecodingError() throws {
        let connection = try connect()
        #expect(try connection.query("SELECT 1 AS one").firstRow().decode("one", as: Int.self) == 1)
        let error = #expect(throws: PostgresError.self) {
            try connection.query("SELECT 1 AS one WHERE false").firstRow()
        }
        #expect(error?.kind == .decoding)
    }

    @Test func everyBindableType_roundTrips() throws {
        let connection = try connect()
        let uuid = UUID()
        let date = Date(timeIntervalSince1970: 1_763_647_387.123)
        let bytes: [UInt8] = [0, 1, 2, 255, 0]
        let row = try connection.query("""
            SELECT \(Int(42)) AS int, \(Int64.max) AS int64, \(Int32.min) AS int32, \(true) AS yes, \(false) AS no,
                   \(3.25) AS double, \("text") AS text, \(uuid) AS uuid, \(date) AS date, \(bytes) AS bytes,
                   \(Data(bytes)) AS data, \(Optional<Int64>.none)::bigint AS missing, \(Optional(5)) AS present
            """).first!
        #expect(try row.decode("int", as: Int.self) == 42)
        #expect(try row.decode("int64", as: Int64.self) == .max)
        #expect(try row.decode("int32", as: Int32.self) == .min)
        #expect(try row.decode("yes", as: Bool.self))
        #expect(try !row.decode("no", as: Bool.self))
        #expect(try row.decode("double", as: Double.self) == 3.25)
        #expect(try row.decode("text", as: String.self) == "text")
        #expect(try row.decode("uuid", as: UUID.self) == uuid)
        #expect(abs(try row.decode("date", as: Date.self).timeIntervalSince(date)) < 0.000_001)
        #expect(try row.decode("bytes", as: [UInt8].self) == bytes)
        #expect(try row.decode("data", as: Data.self) == Data(bytes))
        #expect(try row.decode("missing", as: Int64?.self) == nil)
        #expect(try row.decode("present", as: Int?.self) == 5)
    }

    @Test func narrowerIntegerColumns_decodeIntoWiderTypes() throws {
        let connection = try connect()
        let row = try connection.query("SELECT 7::int2 AS small, 8::int4 AS medium").first!
        #expect(try row.decode("small", as: Int64.self) == 7)
        #expect(try row.decode("medium", as: Int.self) == 8)
    }

    @Test func decodingErrors_nameColumnAndType() throws {
        let connection = try connect()
        let row = try connection.query("SELECT 'x'::text AS name, NULL::int AS nothing").first!
        let wrongType = #expect(throws: PostgresError.self) { try row.decode("name", as: Int.self) }
        #expect(wrongType?.kind == .decoding)
        #expect(wrongType?.details.contains("\"name\"") == true)
        #expect(wrongType?.details.contains("Int") == true)
        let null = #expect(throws: PostgresError.self) { try row.decode("nothing", as: Int.self) }
        #expect(null?.details.contains("NULL") == true)
        let missing = #expect(throws: PostgresError.self) { try row.decode("absent", as: Int.self) }
        #expect(missing?.details.contains("absent") == true)
    }

    /// A name matches a column's whole name, exactly: not a prefix of it nor one it is the
    /// prefix of, and case and non-ASCII bytes count.
    @Test func columnsByName_matchWholeNamesOnly() throws {
        let connection = try connect()
        let row = try connection.query("""
            SELECT 1 AS idx, 2 AS id, 3 AS i, 4 AS "ID", 5 AS "été", NULL::int AS nothing, 7 AS id_2
            """).first!
        #expect(try row.decode("id", as: Int.self) == 2)
        #expect(try row.decode("i", as: Int.self) == 3)
        #expect(try row.decode("ID", as: Int.self) == 4)
        #expect(try row.decode("été", as: Int.self) == 5)
        #expect(try row.isNull("nothing"))
        #expect(try row.position(of: "id_2") == 6)
        #expect(throws: PostgresError.self) { try row.decode("i_", as: Int.self) }
        #expect(throws: PostgresError.self) { try row.decode("Id", as: Int.self) }
    }

    @Test func nulByte_isRefusedByTheServerNotTruncated() throws {
        let connection = try connect()
        let error = #expect(throws: PostgresError.self) { try connection.query("SELECT \("a\u{0}b")::text AS v") }
        #expect(error?.kind == .server)
        #expect(error?.sqlState == .characterNotInRepertoire)
        // The connection survives a statement error.
        #expect(try connection.query("SELECT 1 AS one").first!.decode("one", as: Int.self) == 1)
    }

    @Test func statements_arePreparedOncePerConnection() throws {
        let connection = try connect()
        for id in 0..<5 { try connection.query("SELECT \(id) AS id") }
        let prepared: Int = try connection.query("SELECT count(*) AS n FROM pg_prepared_statements").first!.decode("n")
        // "SELECT $1 AS id" once, plus this counting statement itself.
        #expect(prepared == 2)
    }

    @Test func uniqueViolation_carriesItsSQLState() throws {
        let connection = try connect()
        try connection.query("INSERT INTO users (email) VALUES (\("a@example.com"))")
        let error = #expect(throws: PostgresError.self) {
            try connection.query("INSERT INTO users (email) VALUES (\("a@example.com"))")
        }
        #expect(error?.sqlState == .uniqueViolation)
        #expect(error?.isUnavailable == false)
        #expect(error.map { !$0.description.contains("INSERT") } == true)
    }

    @Test func arrays_bindAsOneParameter() throws {
        let connection = try connect()
        let texts = ["a", "", "x'); DROP TABLE posts; --", "héllo"]
        let row = try connection.query("""
            SELECT array_length(\(PostgresArray(texts)), 1) AS count,
                   (SELECT string_agg(t, '|' ORDER BY n) FROM unnest(\(PostgresArray(texts))) WITH ORDINALITY AS u(t, n)) AS joined,
                   \(Int64(7)) = ANY(\(PostgresArray([Int64(3), 7, Int64.max]))) AS found,
                   coalesce(array_length(\(PostgresArray([Int64]())), 1), 0) AS empty
            """).first!
        #expect(try row.decode("count", as: Int.self) == 4)
        #expect(try row.decode("joined", as: String.self) == texts.joined(separator: "|"))
        #expect(try row.decode("found", as: Bool.self))
        #expect(try row.decode("empty", as: Int.self) == 0)
    }

    @Test func affectedRows_areCounted() throws {
        let connection = try connect()
        try connection.query("INSERT INTO users (email) VALUES ('a@x'), ('b@x'), ('c@x')")
        #expect(try connection.query("DELETE FROM users WHERE email <> \("a@x")").affectedRows == 2)
    }
}

@Suite struct PostgresConnectionLifecycleTests {
    @Test func reset_reconnectsAndForgetsPreparedStatements() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.makeDatabase())
        let before: Int32 = try connection.query("SELECT pg_backend_pid() AS pid").first!.decode("pid")
        try connection.reset()
        let after: Int32 = try connection.query("SELECT pg_backend_pid() AS pid").first!.decode("pid")
        #expect(before != after)
        #expect(connection.isUsable)
    }

    @Test func closedConnection_isNotUsableAndSaysSo() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.makeDatabase())
        connection.close()
        #expect(!connection.isUsable)
        let error = #expect(throws: PostgresError.self) { try connection.query("SELECT 1 AS one") }
        #expect(error?.isUnavailable == true)
    }

    @Test func postgresURL_isAccepted() throws {
        let cluster = try TestDatabase.cluster()
        let socket = cluster.socketDirectory.replacingOccurrences(of: "/", with: "%2F")
        let connection = try PostgresConnection(conninfo: "postgresql://postgres@\(socket):\(cluster.port)/postgres")
        #expect(try connection.query("SELECT 1 AS one").first!.decode("one", as: Int.self) == 1)
    }
}
