import Postgres

/// The SQL behind `DemoSeed`: each kind of row in one statement over bound arrays, with
/// its changes recorded in the same statement, each carrying the count as of its own row
/// (the n-th like of a post says `like_count` n), as if the rows had come one by one.
enum DemoRows {
    /// The new users' ids, in the plan's order.
    static func insertUsers(_ users: [DemoPlan.User], on connection: PostgresConnection) throws -> [Int64] {
        guard !users.isEmpty else { return [] }
        return try connection.query("""
            WITH input AS (
                SELECT * FROM unnest(\(PostgresArray(users.map(\.username))), \(PostgresArray(users.map(\.fullName))))
                    WITH ORDINALITY AS i(username, full_name, k)
            ), u AS (
                INSERT INTO users (email) SELECT username || '@example.com' FROM input ORDER BY k RETURNING id, email
            ), p AS (
                INSERT INTO profiles (user_id, username, full_name, bio)
                SELECT u.id, input.username, input.full_name, 'A demo account'
                FROM u JOIN input ON u.email = input.username || '@example.com'
                RETURNING user_id, username
            )
            SELECT p.user_id FROM p JOIN input USING (username) ORDER BY input.k
            """).rows.map { try $0.decode("user_id") }
    }

    /// The new posts' ids, in the plan's order (ids taken first, so children can name
    /// their parents in the same statement).
    static func insertPosts(_ posts: [DemoPlan.Post], authors: [Int64],
                            on connection: PostgresConnection) throws -> [Int64] {
        guard !posts.isEmpty else { return [] }
        let ids: [Int64] = try connection.query("""
            SELECT nextval(pg_get_serial_sequence('posts', 'id')) AS id FROM generate_series(1, \(Int64(posts.count))) ORDER BY 1
            """).rows.map { try $0.decode("id") }
        // Arrays carry no NULL here: 0 and '' stand for none.
        let parents = posts.map { $0.parent.map { ids[$0] } ?? 0 }
        try connection.query("""
            WITH lock AS (\(ChangeLog.lock(posts: []))),
            input AS (
                SELECT * FROM unnest(\(PostgresArray(ids)), \(PostgresArray(parents)),
                                     \(PostgresArray(posts.map { authors[$0.author] })),
                                     \(PostgresArray(posts.map(\.title))), \(PostgresArray(posts.map(\.summary))),
                                     \(PostgresArray(posts.map(\.body))), \(PostgresArray(posts.map { $0.locationTag ?? "" })))
                    WITH ORDINALITY AS i(id, parent_id, user_id, title, summary, body, location_tag, k)
            ), p AS (
                INSERT INTO posts (id, user_id, parent_id, title, summary, body, location_tag, created_at)
                SELECT id, user_id, nullif(parent_id, 0), title, summary, body, nullif(location_tag, ''),
                       now() - (\(Int64(posts.count)) - k) * interval '1 minute'
                FROM input WHERE (SELECT count(*) FROM lock) >= 0 ORDER BY k
                RETURNING *
            )
            INSERT INTO changes (type, post_id, parent_id, user_id, data)
            SELECT 'post.created', p.id, p.parent_id, p.user_id, CASE WHEN p.parent_id IS NULL
                THEN json_build_object('post', post_json(p::posts, a.username))
                ELSE json_build_object('post', post_json(p::posts, a.username),
                                       'parent_child_count', row_number() OVER (PARTITION BY p.parent_id ORDER BY p.id))
            END FROM p JOIN profiles a ON a.user_id = p.user_id ORDER BY p.id
            """)
        return ids
    }

    static func insertLikes(_ likes: [DemoPlan.Like], postIDs: [Int64], authors: [Int64],
                            on connection: PostgresConnection) throws {
        guard !likes.isEmpty else { return }
        try connection.query("""
            WITH input AS (
                SELECT * FROM unnest(\(PostgresArray(likes.map { postIDs[$0.post] })),
                                     \(PostgresArray(likes.map { authors[$0.user] })))
                    WITH ORDINALITY AS i(post_id, user_id, k)
            ), l AS (
                INSERT INTO likes (post_id, user_id) SELECT post_id, user_id FROM input ORDER BY k RETURNING post_id, user_id
            )
            INSERT INTO changes (type, post_id, parent_id, user_id, data)
            SELECT 'like.changed', l.post_id, p.parent_id, l.user_id,
                   json_build_object('liked', true, 'like_count', row_number() OVER (PARTITION BY l.post_id ORDER BY input.k))
            FROM l JOIN input USING (post_id, user_id) JOIN posts p ON p.id = l.post_id ORDER BY input.k
            """)
    }

    static func insertComments(_ comments: [DemoPlan.Comment], postIDs: [Int64], authors: [Int64],
                               on connection: PostgresConnection) throws {
        guard !comments.isEmpty else { return }
        try connection.query("""
            WITH input AS (
                SELECT * FROM unnest(\(PostgresArray(comments.map { postIDs[$0.post] })),
                                     \(PostgresArray(comments.map { authors[$0.author] })),
                                     \(PostgresArray(comments.map(\.body))))
                    WITH ORDINALITY AS i(post_id, user_id, body, k)
            ), c AS (
                INSERT INTO comments (post_id, user_id, body, created_at)
                SELECT post_id, user_id, body, now() - (\(Int64(comments.count)) - k) * interval '1 second'
                FROM input ORDER BY k
                RETURNING *
            )
            INSERT INTO changes (type, post_id, parent_id, user_id, data)
            SELECT 'comment.created', c.post_id, p.parent_id, c.user_id,
                   json_build_object('comment', comment_json(c::comments, a),
                                     'comment_count', row_number() OVER (PARTITION BY c.post_id ORDER BY c.created_at))
            FROM c JOIN profiles a ON a.user_id = c.user_id JOIN posts p ON p.id = c.post_id ORDER BY c.created_at
            """)
    }

    /// The counters the rows imply, in the rows themselves (API.md: counts kept in the row).
    static func settleCounters(of postIDs: [Int64], on connection: PostgresConnection) throws {
        guard !postIDs.isEmpty else { return }
        try connection.query("""
            UPDATE posts p SET
                child_count = (SELECT count(*) FROM posts c WHERE c.parent_id = p.id),
                like_count = (SELECT count(*) FROM likes l WHERE l.post_id = p.id),
                comment_count = (SELECT count(*) FROM comments m WHERE m.post_id = p.id)
            WHERE p.id = ANY(\(PostgresArray(postIDs)))
            """)
    }
}
