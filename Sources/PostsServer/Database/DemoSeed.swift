import Postgres

/// The few users and posts `posts-server dev` starts with, so a fresh checkout has
/// something to show. Runs only on an empty database.
public enum DemoSeed {
    /// True when it seeded; false when the database already had users.
    @discardableResult
    public static func seedIfEmpty(_ pool: ConnectionPool) throws -> Bool {
        try pool.withTransaction { connection in
            let users: Int = try connection.query("SELECT count(*) AS n FROM users").first!.decode("n")
            guard users == 0 else { return false }
            try connection.execute(unsafeSQL: script)
            return true
        }
    }

    private static let script = """
        INSERT INTO users (email) VALUES ('ash@example.com'), ('blair@example.com'), ('casey@example.com');
        INSERT INTO profiles (user_id, username, full_name, bio)
            SELECT id, split_part(email, '@', 1), initcap(split_part(email, '@', 1)) || ' Demo', 'A demo account'
            FROM users;
        INSERT INTO posts (user_id, parent_id, title, summary, body, timezone, created_at)
            SELECT u.id, NULL, 'Welcome to posts-server', 'What this demo holds',
                   'Posts form a tree: every post can have children. Try GET /api/posts/1/children.',
                   'Europe/Paris', now() - interval '3 hours'
            FROM users u WHERE u.email = 'ash@example.com';
        INSERT INTO posts (user_id, parent_id, title, summary, body, created_at)
            SELECT u.id, 1, 'A first reply', 'Children are posts too', 'They have titles, summaries and bodies.',
                   now() - interval '2 hours'
            FROM users u WHERE u.email = 'blair@example.com';
        INSERT INTO posts (user_id, parent_id, title, summary, body, created_at)
            SELECT u.id, 2, 'Deeper still', 'Trees go as deep as you like', 'GET /api/posts/3/ancestors shows the way up.',
                   now() - interval '1 hour'
            FROM users u WHERE u.email = 'casey@example.com';
        INSERT INTO posts (user_id, parent_id, title, summary, body, location_tag)
            SELECT u.id, NULL, 'Another root', 'Roots have no parent', 'GET /api/posts?parent_id=root lists them.', 'Lisbon'
            FROM users u WHERE u.email = 'casey@example.com';
        INSERT INTO likes (post_id, user_id) SELECT 1, id FROM users;
        INSERT INTO likes (post_id, user_id) SELECT 2, id FROM users WHERE email <> 'blair@example.com';
        INSERT INTO comments (post_id, user_id, body)
            SELECT 1, id, 'Hello from ' || split_part(email, '@', 1) FROM users;
        UPDATE posts p SET
            child_count = (SELECT count(*) FROM posts c WHERE c.parent_id = p.id),
            like_count = (SELECT count(*) FROM likes l WHERE l.post_id = p.id),
            comment_count = (SELECT count(*) FROM comments m WHERE m.post_id = p.id);
        """
}
