import HTTP
import Postgres

/// `GET /api/moderation/overview` (moderators and admins): what the console's Overview
/// shows. Totals and the last day's of users, posts, comments and reports; the health of
/// what the server depends on (as `/api/health` says it); the job queue by kind; the
/// version. One statement; the counts of the day read the tables' `created_at` indexes.
struct ConsoleOverview: Sendable {
    var pool: ConnectionPool
    /// Whose day "the last 24 h" is.
    let clock: ServerClock
    let health: @Sendable () -> [(String, String)]

    func render() throws -> [UInt8] {
        let day: SQLQuery = "\(clock.now) - interval '1 day'"
        let rows = try pool.withConnection { connection in
            try connection.query("""
                SELECT 'users' AS what, count(*) AS total, count(*) FILTER (WHERE created_at > \(day)) AS day
                FROM users WHERE email <> \(ReservedUser.email)
                UNION ALL SELECT 'posts', count(*), count(*) FILTER (WHERE created_at > \(day))
                FROM posts WHERE NOT deleted
                UNION ALL SELECT 'comments', count(*), count(*) FILTER (WHERE created_at > \(day)) FROM comments
                UNION ALL SELECT 'reports', count(*) FILTER (WHERE status = 'open'),
                                 count(*) FILTER (WHERE created_at > \(day)) FROM reports
                UNION ALL SELECT 'job:' || kind, count(*) FILTER (WHERE state <> 'dead'), count(*) FILTER (WHERE state = 'dead')
                FROM jobs GROUP BY kind
                """).rows
        }
        var counts = JSONObject()
        var queues = JSONObject()
        for row in rows {
            let what: String = try row.decode("what")
            let total: Int = try row.decode("total"), day: Int = try row.decode("day")
            if what.hasPrefix("job:") {
                var queue = JSONObject()
                queue.add("queued", total)
                queue.add("dead", day)
                queues.add(String(what.dropFirst(4)), queue)
            } else {
                var count = JSONObject()
                count.add("total", total)
                count.add("last_24h", day)
                counts.add(what, count)
            }
        }
        var health = JSONObject()
        health.add("database", "ok")
        for (name, state) in self.health() { health.add(name, state) }
        var overview = JSONObject()
        overview.add("counts", counts)
        overview.add("health", health)
        overview.add("queues", queues)
        overview.add("version", ServerVersion.current)
        return overview.finished
    }
}
