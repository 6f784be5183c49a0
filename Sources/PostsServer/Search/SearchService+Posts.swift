import Postgres

/// Posts by their words: the generated `posts.search` column (migration 0021: title A,
/// summary B, body C, folded by `search_fold`, CJK runs in pairs; 0023: an unused position
/// between fields, so that no phrase spans two) and its GIN index, queried with
/// `search_query` (web-search syntax, folded the same way), computed once per statement
/// (a MATERIALIZED CTE: inlined, PostgreSQL evaluated it again for every match's rank).
/// Relevance is `ts_rank` (A over B over C), then the newer post; the cursor is the last
/// (rank, id), so pages neither repeat nor skip however ties fall.
///
/// What bounds a search: each match is a row to read (its rank, its visibility), wherever
/// it lies in the table. A word in 4% of 1,000,000 posts was 37,000 rows to read: 444 ms.
/// So a search looks first among the newest `window` posts (an id range: the GIN bitmap
/// ANDed with the primary key's, so only matches in it are read); only when they do not
/// fill the page does it look at the whole table, which then holds few matches. Newest
/// first this is exact (the window follows the cursor down). By relevance it means: the
/// best of the newest 20,000 posts when they hold a page, else the best of all; the
/// cursor keeps the window its first page chose.
extension SearchService {
    static let window: Int64 = 20_000

    func posts(_ text: String, sort: Sort, limit: Int, cursor: String?, caller: Caller?) throws -> Page {
        switch sort {
        case .relevance:
            let key = try cursor.map { text throws(APIError) in try SortKeyCursor(text, length: 3) }
            if let key {
                return try relevance(text, after: (key.values[0], key.values[1]), floor: key.values[2], limit: limit, caller: caller)
            }
            // Words that must all occur have few matches together: the whole table at once
            // (the window first would read the words' index entries twice for nothing).
            if Self.requiresSeveralWords(text) { return try relevance(text, after: nil, floor: 0, limit: limit, caller: caller) }
            let windowed = try relevance(text, after: nil, floor: nil, limit: limit, caller: caller)
            return windowed.shown < limit ? try relevance(text, after: nil, floor: 0, limit: limit, caller: caller) : windowed
        case .recent:
            let key = try cursor.map { text throws(APIError) in try KeysetCursor(text) }
            let windowed = try recent(text, after: key, windowed: true, limit: limit, caller: caller)
            return windowed.shown < limit ? try recent(text, after: key, windowed: false, limit: limit, caller: caller) : windowed
        }
    }

    /// Two words or more and no `or`: an intersection. (A guess from the text: a phrase or an
    /// exclusion counts too, and is as narrow.)
    static func requiresSeveralWords(_ text: String) -> Bool {
        let words = text.split(whereSeparator: \.isWhitespace)
        return words.count >= 2 && !words.contains { $0.lowercased() == "or" }
    }

    /// `floor`: the window's lowest id but one (0: the whole table); nil: the newest
    /// `window` posts as of now.
    private func relevance(_ text: String, after key: (rank: Int64, id: Int64)?, floor: Int64?, limit: Int,
                           caller: Caller?) throws -> Page {
        var query = matches(text, caller: caller, windowed: floor != 0, extra: ", s.floor")
        if let key {
            query.append(" AND (ts_rank(p.search, s.q)::float8, p.id) < (\(SortKeyCursor.rank(key.rank)), \(key.id))")
        }
        query.append(" ORDER BY rank DESC, p.id DESC LIMIT \(literal: limit + 1)")
        let floorSQL: SQLQuery = floor.map { "\($0)::bigint" } ?? "(SELECT coalesce(max(id), 0) FROM posts) - \(Self.window)"
        return try page(of: "WITH s AS MATERIALIZED (SELECT search_query(\(text)) AS q, \(floorSQL) AS floor) \(query)",
                        limit: limit, caller: caller) { row in
            SortKeyCursor([SortKeyCursor.key(try row.decode("rank")), try row.decode("id"), try row.decode("floor")]).text
        }
    }

    /// Newest first below the cursor; `windowed`: among the `window` posts below it only.
    private func recent(_ text: String, after key: KeysetCursor?, windowed: Bool, limit: Int, caller: Caller?) throws -> Page {
        var query = matches(text, caller: caller, windowed: windowed, extra: "")
        if let key { query.append(key.before(created: "p.created_at", id: "p.id")) }
        query.append(" ORDER BY p.created_at DESC, p.id DESC LIMIT \(literal: limit + 1)")
        let floorSQL: SQLQuery = !windowed ? "0::bigint"
            : key.map { "\($0.id - Self.window)::bigint" } ?? "(SELECT coalesce(max(id), 0) FROM posts) - \(Self.window)"
        return try page(of: "WITH s AS MATERIALIZED (SELECT search_query(\(text)) AS q, \(floorSQL) AS floor) \(query)",
                        limit: limit, caller: caller) { try PostShape.cursor(after: $0).text }
    }

    /// The matches (in the window `s.floor` opens, if `windowed`) as the caller may see
    /// them, with their rank.
    private func matches(_ text: String, caller: Caller?, windowed: Bool, extra: String) -> SQLQuery {
        var query: SQLQuery = """
            SELECT \(unsafeSQL: PostShape.columns)\(PostShape.likedByMe(caller: caller)),
                   ts_rank(p.search, s.q)::float8 AS rank\(unsafeSQL: extra)
            FROM s JOIN posts p ON p.search @@ s.q
            \(unsafeSQL: PostShape.authorJoin)
            WHERE NOT p.deleted
            """
        // Without a window, no condition on ids at all: `id > 0` had the planner read the
        // whole primary key into a bitmap (a two-word search: 200 ms instead of 2).
        if windowed { query.append(" AND p.id > s.floor") }
        query.append(Visibility.visible(on: .search, author: "p.user_id", to: caller, suspendedFlag: "pr.suspended"))
        return query
    }

    private func page(of query: SQLQuery, limit: Int, caller: Caller?, cursor: (PostgresRow) throws -> String) throws -> Page {
        let rows = try pool.withReadConnection { try $0.query(query).rows }
        let (json, last) = try RowJSON.page(rows, limit: limit) { row, out in
            try PostShape.append(row, withLiked: caller != nil, to: &out)
        }
        return Page(json: json, nextCursor: try last.map(cursor), shown: min(rows.count, limit))
    }
}
