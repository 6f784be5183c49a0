import Postgres

/// A caller's blocks and mutes as its requests use them. A block works both ways: `blocked`
/// holds the users the caller blocked and those who blocked it. Sorted, usually empty.
public struct Relations: Sendable, Equatable {
    public var blocked: [Int64] = []
    public var muted: [Int64] = []

    public init(blocked: [Int64] = [], muted: [Int64] = []) {
        self.blocked = blocked
        self.muted = muted
    }

    /// Whose posts and comments the caller's lists leave out: blocked either way, or muted.
    var hiddenInLists: [Int64] {
        muted.isEmpty ? blocked : Array(Set(blocked).union(muted)).sorted()
    }

    /// The two sets of the user in `userColumn`, as two columns of the query that finds
    /// the user (a token's lookup, trust mode's email): two index probes, no round trip.
    static func columns(of userColumn: String) -> String {
        """
        array_to_string(ARRAY(SELECT blocked_id FROM blocks WHERE blocker_id = \(userColumn)
                              UNION SELECT blocker_id FROM blocks WHERE blocked_id = \(userColumn) ORDER BY 1), ',') AS blocked_users,
        array_to_string(ARRAY(SELECT muted_id FROM mutes WHERE muter_id = \(userColumn) ORDER BY 1), ',') AS muted_users
        """
    }

    init(_ row: PostgresRow) throws {
        blocked = Self.ids(try row.decode("blocked_users", as: String.self))
        muted = Self.ids(try row.decode("muted_users", as: String.self))
    }

    private static func ids(_ text: String) -> [Int64] {
        text.split(separator: ",").compactMap { Int64($0) }
    }
}
