import Foundation
import Postgres

/// `GET /api/me/export`: one JSON document of everything the server holds about the
/// caller. It is written page by page into an unlinked temporary file, from one read-only
/// snapshot, and sent from there: memory stays flat whatever the account's size (100,000
/// posts are 200 pages of 500), and the client learns the length up front.
struct AccountExport: Sendable {
    let pool: ConnectionPool
    let sessions: Sessions

    static let pageSize = 500

    /// The path of a new temporary file holding the document: the caller sends it and
    /// removes it (an open descriptor keeps it readable after the unlink).
    func export(for caller: Caller) throws -> String {
        let file = try ExportFile()
        do {
            try pool.withTransaction(isolation: .repeatableRead) { connection in
                try connection.query("SET TRANSACTION READ ONLY")
                try write(caller, to: file, on: connection)
            }
            try file.close()
        } catch {
            file.remove()
            throw error
        }
        return file.path
    }

    private func write(_ caller: Caller, to file: ExportFile, on connection: PostgresConnection) throws {
        let userID = caller.userID
        let account = try connection.query("""
            SELECT \(unsafeSQL: ProfileShape.columns), u.email, u.created_at AS joined
            FROM users u JOIN profiles pr ON pr.user_id = u.id WHERE u.id = \(userID)
            """).firstRow()
        var head = JSONObject.success()
        var user = JSONObject()
        user.add("id", userID)
        user.add("email", try account.decode("email", as: String.self))
        user.add("created_at", try account.decode("joined", as: PostgresTimestamp.self))
        head.add("user", user)
        var profile: [UInt8] = []
        try ProfileShape.append(account, to: &profile)
        head.addRaw("profile", profile)
        head.addRaw("sessions", try Sessions.array(connection.query("""
            SELECT \(unsafeSQL: Sessions.shape.selectList()), t.id = \(caller.tokenID) AS current
            FROM tokens t WHERE t.user_id = \(userID) AND \(sessions.live("t")) ORDER BY t.created_at DESC, t.id DESC
            """).rows))
        // The object stays open: the long lists follow, then the ones not kept yet.
        try file.write(head.bytes)

        try writeList("posts", keyedBy: Int64.self, to: file) { after in
            var page: SQLQuery = """
                SELECT \(unsafeSQL: PostShape.columns), p.id AS key FROM posts p \(unsafeSQL: PostShape.authorJoin)
                WHERE p.user_id = \(userID)
                """
            if let after { page.append(" AND p.id > \(after)") }
            page.append(" ORDER BY p.id LIMIT \(Self.pageSize)")
            return try connection.query(page).rows
        } append: { row, out in try PostShape.append(row, withLiked: false, to: &out) }

        try writeList("comments", keyedBy: UUID.self, to: file) { after in
            var page: SQLQuery = """
                SELECT \(unsafeSQL: CommentShape.columns), c.id AS key FROM comments c \(unsafeSQL: CommentShape.authorJoin)
                WHERE c.user_id = \(userID)
                """
            if let after { page.append(" AND c.id > \(after)") }
            page.append(" ORDER BY c.id LIMIT \(Self.pageSize)")
            return try connection.query(page).rows
        } append: { row, out in try CommentShape.append(row, to: &out) }

        try writeList("likes", keyedBy: Int64.self, to: file) { after in
            var page: SQLQuery = "SELECT l.post_id, l.post_id AS key FROM likes l WHERE l.user_id = \(userID)"
            if let after { page.append(" AND l.post_id > \(after)") }
            page.append(" ORDER BY l.post_id LIMIT \(Self.pageSize)")
            return try connection.query(page).rows
        } append: { row, out in RowJSON.appendInteger(try row.decode(at: 0, as: Int64.self), to: &out) }

        // What this server does not keep yet (follows, blocks, reports, notifications): the
        // document names them all the same, so that a client reads one shape.
        try file.write(Array(#","follows":[],"blocks":[],"reports":[],"notifications":[]}"#.utf8))
    }

    /// `,"name":[…]`, page after page: `next` reads the rows after a key (nil: from the
    /// start), each with its key in a column named `key`.
    private func writeList<Key: PostgresDecodable & PostgresBindable>(
        _ name: String, keyedBy: Key.Type, to file: ExportFile, next: (Key?) throws -> [PostgresRow],
        append: (PostgresRow, inout [UInt8]) throws -> Void
    ) throws {
        try file.write(Array(",\"\(name)\":[".utf8))
        var after: Key?
        var first = true
        while true {
            let rows = try next(after)
            var out: [UInt8] = []
            out.reserveCapacity(rows.count * 600)
            for row in rows {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                try append(row, &out)
                after = try row.decode("key", as: Key.self)
            }
            try file.write(out)
            if rows.count < Self.pageSize { break }
        }
        try file.write([UInt8(ascii: "]")])
    }
}
