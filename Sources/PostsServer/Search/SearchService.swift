import Postgres

/// `GET /api/search`: posts by their words, people by their names, tags by theirs, each
/// one statement through the one visibility policy (`Visibility.Surface.search`).
///
/// Posts: `SearchService+Posts.swift`.
///
/// People: trigram indexes (`pg_trgm`) of the folded username and full name: a prefix of
/// the username, or a username or a word of the full name like the query (`ashh` finds
/// `ash_n`; word similarity, 0.6: plain similarity, 0.3, found `user5678` for `user12`), or
/// a prefix of the username one edit from the query (`nwiowulkhh` finds `nwiowflkhh_n`,
/// which word similarity missed: migration 0023). The exact username first, then people
/// the caller follows, then by followers.
struct SearchService: Sendable {
    var pool: ConnectionPool

    enum Sort: String, Sendable {
        case relevance, recent
    }

    struct Page: Sendable {
        let json: [UInt8]
        let nextCursor: String?
        /// How many items the page holds.
        var shown = 0
    }

    /// What `q` may be (API.md): not empty or white space, at most 256 characters.
    static func validQuery(_ text: String?) throws(APIError) -> String {
        guard let text, !text.allSatisfy(\.isWhitespace) else { throw .malformed("q is required: the words to search for") }
        guard text.count <= 256 else { throw .malformed("q must be at most 256 characters") }
        return text
    }

    func people(_ text: String, limit: Int, cursor: String?, caller: Caller?) throws -> Page {
        // The query folded where the indexes can use it: a value of the statement, computed
        // once, not a column of a join (which left the planner a scan of every profile). One
        // arm per index: as one OR, the planner preferred to test every profile (25 ms for
        // 10,000 against 7 ms this way, a prefix a thousand names share).
        let folded: SQLQuery = "search_fold(btrim(\(text)))"
        let followed: SQLQuery = caller.map { caller in
            "EXISTS (SELECT 1 FROM follows f WHERE f.follower_id = \(caller.userID) AND f.followee_id = pr.user_id)"
        } ?? "false"
        // The typo arm: the index looks up what `search_typo_lookups` gives, and the exact
        // patterns sort what it found. They test the username's first characters, an
        // expression the index does not cover: given the username itself, the planner looked
        // every pattern up in the index too (among 1,000,000 names, 2,500 to 8,500 pages
        // where this reads 30 to 750 for a query of 10 to 14 characters).
        var matches: SQLQuery = """
            SELECT \(unsafeSQL: ProfileShape.columns)\(ProfileShape.followedByMe(caller: caller)),
                   (lower(pr.username) = lower(btrim(\(text))))::int AS exact, (\(followed))::int AS followed
            FROM profiles pr
            WHERE pr.user_id IN (
                SELECT user_id FROM profiles WHERE search_username LIKE \(Self.likePrefix(folded))
                UNION SELECT user_id FROM profiles WHERE \(folded) <% search_username
                UNION SELECT user_id FROM profiles WHERE \(folded) <% search_full_name
                UNION SELECT user_id FROM profiles WHERE search_username LIKE ANY (search_typo_lookups(\(folded)))
                    AND left(search_username, char_length(\(folded)) + 1) LIKE ANY (search_typo_patterns(\(folded)))
            ) AND pr.username <> \(ReservedUser.username)
            """
        matches.append(Visibility.visible(on: .search, author: "pr.user_id", to: caller, suspendedFlag: "pr.suspended"))
        var query: SQLQuery = "SELECT * FROM (\(matches)) m WHERE true"
        if let cursor = try cursor.map({ text throws(APIError) in try SortKeyCursor(text, length: 4) }) {
            let key = cursor.values
            query.append(" AND (m.exact, m.followed, m.followers_count, m.user_id) < (\(key[0]), \(key[1]), \(key[2]), \(key[3]))")
        }
        query.append(" ORDER BY m.exact DESC, m.followed DESC, m.followers_count DESC, m.user_id DESC LIMIT \(literal: limit + 1)")
        let rows = try pool.withReadConnection { try $0.query(query).rows }
        let followedByMe = try rows.first.flatMap { row in caller == nil ? nil : try row.position(of: "followed_by_me") }
        let (json, last) = try RowJSON.page(rows, limit: limit) { row, out in
            try ProfileShape.append(row, followedByMe: followedByMe, to: &out)
        }
        let next = try last.map { row in
            SortKeyCursor([Int64(try row.decode("exact", as: Int32.self)), Int64(try row.decode("followed", as: Int32.self)),
                           Int64(try row.decode("followers_count", as: Int32.self)), try row.decode("user_id")]).text
        }
        return Page(json: json, nextCursor: next)
    }

    /// Tags by name: a prefix, or a name like it; the exact name first, then the most used.
    func tags(_ text: String, limit: Int, cursor: String?) throws -> Page {
        let folded: SQLQuery = "search_fold(ltrim(btrim(\(text)), '#'))"
        var query: SQLQuery = """
            SELECT * FROM (
                SELECT t.id, t.name, t.posts_count, (t.name = \(folded))::int AS exact
                FROM tags t WHERE t.name LIKE \(Self.likePrefix(folded)) OR t.name % \(folded)
            ) m WHERE true
            """
        if let cursor = try cursor.map({ text throws(APIError) in try SortKeyCursor(text, length: 3) }) {
            query.append(" AND (m.exact, m.posts_count, m.id) < (\(cursor.values[0]), \(cursor.values[1]), \(cursor.values[2]))")
        }
        query.append(" ORDER BY m.exact DESC, m.posts_count DESC, m.id DESC LIMIT \(literal: limit + 1)")
        let rows = try pool.withReadConnection { try $0.query(query).rows }
        let (json, last) = try RowJSON.page(rows, limit: limit) { row, out in try TagShape.append(row, to: &out) }
        let next = try last.map { row in
            SortKeyCursor([Int64(try row.decode("exact", as: Int32.self)), Int64(try row.decode("posts_count", as: Int32.self)),
                           try row.decode("id")]).text
        }
        return Page(json: json, nextCursor: next)
    }

    /// `LIKE` the folded query as a prefix, its own `%`, `_` and `\` taken literally.
    private static func likePrefix(_ folded: SQLQuery) -> SQLQuery {
        "search_like_literal(\(folded)) || '%'"
    }
}
