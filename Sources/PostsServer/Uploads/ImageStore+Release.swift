import Postgres

/// API.md: a file is removed once nothing points to it. A post's image or an avatar may be
/// named by another row too (a profile's `avatar_url` may be set to any URL), so after the
/// commit that dropped a row's reference, the file goes only if no post and no profile
/// still names it.
extension ImageStore {
    func release(_ urls: [String?], checkingWith pool: ConnectionPool) {
        let stored = Set(urls.compactMap { $0 }.filter { StoredImageName(url: $0) != nil })
        for url in stored {
            // Kept when the database cannot say (an outage): a file too many, never one too few.
            guard let referenced = try? Self.isReferenced(url, pool: pool), !referenced else { continue }
            remove(url: url)
        }
    }

    private static func isReferenced(_ url: String, pool: ConnectionPool) throws -> Bool {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT EXISTS (SELECT 1 FROM posts WHERE image_url = \(url))
                    OR EXISTS (SELECT 1 FROM profiles WHERE avatar_url = \(url)) AS referenced
                """).firstRow().decode("referenced", as: Bool.self)
        }
    }
}
