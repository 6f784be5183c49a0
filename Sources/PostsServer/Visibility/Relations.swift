import Postgres

/// A caller's blocks and mutes as its requests use them. A block works both ways: `blocked`
/// holds the users the caller blocked and those who blocked it. Sorted, usually empty. The
/// array parameters the reads bind are made once per version of the sets (`RelationsCache`).
public struct Relations: Sendable, Equatable {
    public let blocked: [Int64]
    public let muted: [Int64]
    /// Blocked either way, or muted: whom the caller's lists leave out.
    let hiddenInLists: [Int64]
    let blockedParameter: PostgresArray
    let hiddenInListsParameter: PostgresArray

    public init(blocked: [Int64] = [], muted: [Int64] = []) {
        self.blocked = blocked
        self.muted = muted
        hiddenInLists = muted.isEmpty ? blocked : Array(Set(blocked).union(muted)).sorted()
        blockedParameter = PostgresArray(blocked)
        hiddenInListsParameter = PostgresArray(hiddenInLists)
    }

    public static func == (left: Relations, right: Relations) -> Bool {
        left.blocked == right.blocked && left.muted == right.muted
    }

    /// The user's sets, read from the tables (on a version this server has not seen).
    static func read(of userID: Int64, on connection: PostgresConnection) throws -> Relations {
        let row = try connection.query("""
            SELECT array_to_string(ARRAY(SELECT blocked_id FROM blocks WHERE blocker_id = \(userID)
                                         UNION SELECT blocker_id FROM blocks WHERE blocked_id = \(userID) ORDER BY 1), ',') AS blocked,
                   array_to_string(ARRAY(SELECT muted_id FROM mutes WHERE muter_id = \(userID) ORDER BY 1), ',') AS muted
            """).firstRow()
        return Relations(blocked: ids(try row.decode("blocked", as: String.self)), muted: ids(try row.decode("muted", as: String.self)))
    }

    private static func ids(_ text: String) -> [Int64] {
        text.split(separator: ",").compactMap { Int64($0) }
    }
}
