import Postgres

/// The demo seed's follows: each new user follows the next three (fewer when there are
/// fewer users), written before the posts so that the posts' own fan-out fills every feed
/// (`FeedEffects`); the counters and each follow's event as the routes' follows make them.
enum DemoFollows {
    static let perUser = 3

    /// The (follower, followee) pairs among `users`, in order.
    static func pairs(among users: [Int64]) -> [(Int64, Int64)] {
        let count = users.count
        return users.indices.flatMap { index in
            (1...perUser).compactMap { step in step < count ? (users[index], users[(index + step) % count]) : nil }
        }
    }

    /// Inserts the pairs, with their events; returns how many.
    static func insert(among users: [Int64], effects: EventEffects, on connection: PostgresConnection) throws -> Int {
        let pairs = pairs(among: users)
        guard !pairs.isEmpty else { return 0 }
        try Write.take(.profiles(users), on: connection)
        try effects.run(Write(
            locking: .held,
            steps: ["""
                made AS (
                    INSERT INTO follows (follower_id, followee_id, created_at)
                    SELECT f, t, \(effects.clock.now) FROM unnest(\(PostgresArray(pairs.map(\.0))), \(PostgresArray(pairs.map(\.1)))) AS x(f, t)
                    ON CONFLICT DO NOTHING RETURNING follower_id, followee_id
                )
                """, FollowEdges.counting("made", sign: "+")],
            events: [(.followChanged, FollowEdges.events("made", following: true, actor: "r.follower_id"))],
            profilesCounted: "counted", answer: "SELECT 1"), on: connection)
        return pairs.count
    }
}
