import Postgres

/// The demo seed's follows: each new user follows the next three (fewer when there are
/// fewer users), written before the posts so that the posts' own fan-out fills every feed
/// (migration 0013); the counters and each follow's change as the routes write them.
enum DemoFollows {
    static let perUser = 3

    /// The (follower, followee) pairs among `users`, in order.
    static func pairs(among users: [Int64]) -> [(Int64, Int64)] {
        let count = users.count
        return users.indices.flatMap { index in
            (1...perUser).compactMap { step in step < count ? (users[index], users[(index + step) % count]) : nil }
        }
    }

    /// Inserts the pairs; returns how many.
    static func insert(among users: [Int64], on connection: PostgresConnection) throws -> Int {
        let pairs = pairs(among: users)
        guard !pairs.isEmpty else { return 0 }
        try connection.query(FollowEdges.lockProfiles(users))
        try connection.query("""
            WITH made AS (
                INSERT INTO follows (follower_id, followee_id)
                SELECT * FROM unnest(\(PostgresArray(pairs.map(\.0))), \(PostgresArray(pairs.map(\.1))))
                ON CONFLICT DO NOTHING RETURNING follower_id, followee_id
            ), \(FollowEdges.counting("made", sign: "+")),
            \(FollowEdges.recording("made", following: true, by: "r.follower_id"))
            SELECT 1
            """)
        return pairs.count
    }
}
