import Foundation
import Postgres

/// `GET /api/me/export`: one JSON document of everything the server holds about the
/// caller. It is written page by page into an unlinked temporary file, from one read-only
/// snapshot, and sent from there: memory stays flat whatever the account's size (100,000
/// posts are 200 pages of 500), and the client learns the length up front.
struct AccountExport: Sendable {
    var pool: ConnectionPool
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
        // The provider identities it signs in with (issue 35).
        var identities: [JSONObject] = []
        for row in try connection.query("SELECT id, issuer, subject, email, created_at FROM identities WHERE user_id = \(userID) ORDER BY id").rows {
            var identity = JSONObject()
            identity.add("id", try row.decode("id", as: Int64.self))
            identity.add("issuer", try row.decode("issuer", as: String.self))
            identity.add("subject", try row.decode("subject", as: String.self))
            identity.add("email", try row.decode("email", as: String?.self))
            identity.add("created_at", try row.decode("created_at", as: PostgresTimestamp.self))
            identities.append(identity)
        }
        head.add("identities", identities)
        // The object stays open: the long lists follow, then the ones not kept yet.
        try file.write(head.bytes)

        try writeList("posts", keyedBy: Int64.self, key: "p.id", to: file, on: connection,
                      select: "SELECT \(unsafeSQL: PostShape.columns)",
                      from: "FROM posts p \(unsafeSQL: PostShape.authorJoin) WHERE p.user_id = \(userID)") { row, out in
            try PostShape.append(row, withLiked: false, to: &out)
        }
        try writeList("comments", keyedBy: UUID.self, key: "c.id", to: file, on: connection,
                      select: "SELECT \(unsafeSQL: CommentShape.columns)",
                      from: "FROM comments c \(unsafeSQL: CommentShape.authorJoin) WHERE c.user_id = \(userID)") { row, out in
            try CommentShape.append(row, to: &out)
        }
        try writeList("likes", keyedBy: Int64.self, key: "l.post_id", to: file, on: connection,
                      select: "SELECT l.post_id", from: "FROM likes l WHERE l.user_id = \(userID)") { row, out in
            RowJSON.appendInteger(try row.decode("post_id", as: Int64.self), to: &out)
        }

        try writeList("blocks", keyedBy: Int64.self, key: "b.blocked_id", to: file, on: connection,
                      select: "SELECT b.blocked_id", from: "FROM blocks b WHERE b.blocker_id = \(userID)") { row, out in
            RowJSON.appendInteger(try row.decode("blocked_id", as: Int64.self), to: &out)
        }

        try writeList("follows", keyedBy: Int64.self, key: "f.followee_id", to: file, on: connection,
                      select: "SELECT f.followee_id", from: "FROM follows f WHERE f.follower_id = \(userID)") { row, out in
            RowJSON.appendInteger(try row.decode("followee_id", as: Int64.self), to: &out)
        }

        try writeList("reports", keyedBy: Int64.self, key: "r.id", to: file, on: connection,
                      select: "SELECT \(unsafeSQL: Self.report.selectList())",
                      from: "FROM reports r WHERE r.reporter_id = \(userID)") { row, out in
            try Self.report.append(row, to: &out)
        }
        // Every notification kept for the caller, those a block or a mute hides included.
        try writeList("notifications", keyedBy: Int64.self, key: "n.id", to: file, on: connection,
                      select: "SELECT \(unsafeSQL: NotificationShape.columns)",
                      from: "FROM notifications n JOIN profiles pr ON pr.user_id = n.actor_id WHERE n.recipient_id = \(userID)") { row, out in
            try NotificationShape.append(row, to: &out)
        }
        try writeList("push_tokens", keyedBy: String.self, key: "t.platform || ':' || t.token", to: file, on: connection,
                      select: "SELECT \(unsafeSQL: Self.pushToken.selectList())",
                      from: "FROM push_tokens t WHERE t.user_id = \(userID)") { row, out in
            try Self.pushToken.append(row, to: &out)
        }
        try file.write([UInt8(ascii: "}")])
    }

    /// A report as its reporter made it (who resolved it is the moderators' business).
    private static let report = ResourceShape([
        ResourceField("id", "r.id", .integer),
        ResourceField("post_id", "r.post_id", .integer),
        ResourceField("comment_id", "r.comment_id", .uuid),
        ResourceField("user_id", "r.user_id", .integer),
        ResourceField("reason", "r.reason", .text),
        ResourceField("details", "r.details", .text),
        ResourceField("status", "r.status", .text),
        ResourceField("created_at", "r.created_at", .time),
    ])

    private static let pushToken = ResourceShape([
        ResourceField("platform", "t.platform", .text),
        ResourceField("token", "t.token", .text),
        ResourceField("device_id", "t.device_id", .text),
        ResourceField("created_at", "t.created_at", .time),
    ])

    /// `,"name":[…]`: the rows of `select` `from`, page after page in `key` order (a keyset
    /// walk: each page starts after the last key of the one before).
    private func writeList<Key: PostgresDecodable & PostgresBindable>(
        _ name: String, keyedBy: Key.Type, key: String, to file: ExportFile, on connection: PostgresConnection,
        select: SQLQuery, from: SQLQuery, append: (PostgresRow, inout [UInt8]) throws -> Void
    ) throws {
        try file.write(Array(",\"\(name)\":[".utf8))
        var after: Key?
        var first = true
        while true {
            var page: SQLQuery = "\(select), \(unsafeSQL: key) AS key \(from)"
            if let after { page.append(" AND \(unsafeSQL: key) > \(after)") }
            page.append(" ORDER BY \(unsafeSQL: key) LIMIT \(Self.pageSize)")
            let rows = try connection.query(page).rows
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
