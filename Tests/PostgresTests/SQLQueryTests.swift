import Foundation
import Testing
@testable import Postgres

@Suite struct SQLQueryTests {
    @Test func interpolatedValues_becomeNumberedBinds() {
        let id: Int64 = 7
        let name = "x'); DROP TABLE posts; --"
        let query: SQLQuery = "SELECT * FROM posts WHERE id = \(id) AND title = \(name) OR id = \(id)"
        #expect(query.sql == "SELECT * FROM posts WHERE id = $1 AND title = $2 OR id = $3")
        #expect(query.binds.count == 3)
        #expect(query.binds[1] == PostgresValue(type: .text, bytes: Array(name.utf8)))
    }

    @Test func fragments_keepTheirBindsInOrder_renumberedAfterTheOnesBefore() {
        var inner: SQLQuery = "SELECT p.id AS \"émoji 🎉\" FROM posts p WHERE p.parent_id = \(Int64(1))"
        inner.append(" AND p.user_id = \(Int64(2)) AND p.id > \(Int64(3))")
        let outer: SQLQuery = "SELECT \(Int64(4)), x.* FROM (\(inner)) x WHERE x.id <> \(Int64(5))"
        #expect(outer.sql == "SELECT $1, x.* FROM (SELECT p.id AS \"émoji 🎉\" FROM posts p WHERE p.parent_id = $2 "
                    + "AND p.user_id = $3 AND p.id > $4) x WHERE x.id <> $5")
        #expect(outer.binds.count == 5)
    }

    @Test func renumbering_leavesDollarsThatAreNoBindAlone() {
        #expect(SQLQuery.renumbered("a $ b $$ c $1 d $12", by: 3) == "a $ b $$ c $4 d $15")
        #expect(SQLQuery.renumbered("no binds at all", by: 9) == "no binds at all")
        #expect(SQLQuery.renumbered("$1", by: 0) == "$1")
        #expect(SQLQuery.renumbered("$12345678901234567890", by: 1) == "$12345678901234567890")
        #expect(SQLQuery.renumbered("é$2ü", by: 1) == "é$3ü")
    }

    @Test func nil_bindsNull() {
        let missing: String? = nil
        let query: SQLQuery = "SELECT \(missing)"
        #expect(query.binds == [.null])
    }

    @Test func unsafeSQL_isSplicedVerbatim() {
        let query: SQLQuery = "SELECT \(unsafeSQL: "id, title") FROM posts WHERE id = \(1)"
        #expect(query.sql == "SELECT id, title FROM posts WHERE id = $1")
    }

    @Test func description_masksValues() {
        let secret = "hunter2"
        let query: SQLQuery = "SELECT \(secret)"
        #expect(!query.description.contains(secret))
        #expect(query.description.contains("****"))
    }

    @Test func binaryEncodings_matchPostgreSQL() {
        #expect(Int64(1).postgresValue.bytes == [0, 0, 0, 0, 0, 0, 0, 1])
        #expect(Int32(-2).postgresValue.bytes == [0xFF, 0xFF, 0xFF, 0xFE])
        #expect(true.postgresValue.bytes == [1])
        #expect(Date(timeIntervalSince1970: 946_684_800).postgresValue.bytes == [0, 0, 0, 0, 0, 0, 0, 0])
        #expect(PostgresTimestamp(microsecondsSince2000: 1_500).millisecondsSince1970 == 946_684_800_001)
        #expect(PostgresTimestamp(microsecondsSince2000: -1_500).millisecondsSince1970 == 946_684_799_998)
    }
}
