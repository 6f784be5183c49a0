import Postgres

/// Creating and editing posts, each in one transaction that keeps `child_count` exact and
/// records its change (`ChangeLog`). Image files are kept (renamed into place) before the
/// commit and removed again if it fails; files of posts that are replaced go after the
/// commit. Deleting and moving are in `PostService+Tree`.
extension PostService {
    /// Creates a post: the post, or the first answer again for a retried key.
    func create(_ draft: PostDraft, by caller: Caller, idempotency: IdempotentRequest?) throws -> Created {
        if let parentID = draft.parentID { try Visibility.checkInteraction(withPost: parentID, by: caller, pool: pool) }
        let stored = try draft.image.map(images.keep)
        do {
            let outcome = try pool.withTransaction { connection -> Created in
                if let replay = try idempotency?.replay(on: connection) { return .replayed(replay) }
                let post = try insert(draft, image: stored, by: caller, on: connection)
                try idempotency?.record(post, as: "post", on: connection)
                return .created(post)
            }
            // The first request made the post: this one's image is not needed.
            if case .replayed = outcome { images.remove(url: stored?.url) }
            return outcome
        } catch {
            images.remove(url: stored?.url)
            throw error
        }
    }

    /// The parent's count and the new row in one statement: no parent row, no post (404).
    private func insert(_ draft: PostDraft, image: ImageStore.Stored?, by caller: Caller,
                        on connection: PostgresConnection) throws -> [UInt8] {
        let parentID: Int64? = draft.parentID
        let locationTag: String? = draft.locationTag
        let imageURL: String? = image?.url
        let imageWidth: Int32? = image.map { Int32($0.width) }
        let imageHeight: Int32? = image.map { Int32($0.height) }
        // No lookup at all when no field holds a candidate `@name` (most posts).
        let mentions = Mentions.column(try Mentions.resolve(
            [("title", draft.title), ("summary", draft.summary), ("body", draft.body)], on: connection))
        // The parent's lock before any write (its count is in the change: see ChangeLog).
        let query: SQLQuery = """
            WITH lock AS (\(ChangeLog.lock(posts: [parentID]))),
            parent AS (
                UPDATE posts SET child_count = child_count + 1
                WHERE id = \(parentID) AND NOT deleted AND \(unsafeSQL: ChangeLog.gate)\(Visibility.activeAuthor(of: "posts.user_id"))
                RETURNING id, child_count
            ), p AS (
                INSERT INTO posts (user_id, parent_id, title, summary, body, image_url, image_width, image_height,
                                   timezone, location_tag, ai_generated, mentions)
                SELECT \(caller.userID), \(parentID)::bigint, \(draft.title), \(draft.summary), \(draft.body),
                       \(imageURL)::text, \(imageWidth)::int, \(imageHeight)::int,
                       \(draft.timezone), \(locationTag)::text, \(draft.aiGenerated), \(mentions)::json
                WHERE (\(parentID)::bigint IS NULL OR EXISTS (SELECT 1 FROM parent)) AND \(unsafeSQL: ChangeLog.gate)
                RETURNING *
            ), recorded AS (\(ChangeLog.record(ChangeRecord(
                kind: .postCreated, postID: "p.id", parentID: "p.parent_id", userID: "p.user_id",
                data: [("post", "\(unsafeSQL: PostShape.json)")],
                omittedWhenNull: ("parent_child_count", "(SELECT child_count FROM parent)"),
                source: "FROM p \(unsafeSQL: PostShape.authorJoin)"))))
            SELECT \(unsafeSQL: PostShape.columns), false AS liked_by_me FROM p \(unsafeSQL: PostShape.authorJoin)
            """
        guard let post = try Self.single(Self.insertingUnderParent(query, on: connection), withLiked: true) else {
            if let parentID, try Self.isTombstone(parentID, on: connection) { throw Self.tombstoneGone }
            throw APIError.notFound("no such parent post")
        }
        return post
    }

    /// API.md: a tombstone (a post kept from a deleted account) cannot be edited, liked,
    /// commented on or posted under.
    static let tombstoneGone = APIError(.gone, "this post was removed with its author's account")

    /// Whether the post is a tombstone; false when there is no such post.
    static func isTombstone(_ id: Int64, on connection: PostgresConnection) throws -> Bool {
        try connection.query("SELECT deleted FROM posts WHERE id = \(id)").first?.decode("deleted", as: Bool.self) ?? false
    }

    /// The insert, where a parent deleted between our update of it and the insert's own
    /// check shows as a foreign-key violation: that too is "no such parent".
    private static func insertingUnderParent(_ query: SQLQuery, on connection: PostgresConnection) throws -> PostgresResult {
        do {
            return try connection.query(query)
        } catch where error.sqlState == .foreignKeyViolation {
            throw APIError.notFound("no such parent post")
        }
    }

    /// Changes what the edits name; only the author may (403), and only an existing post (404).
    func update(_ id: Int64, with edits: PostEdits, by caller: Caller) throws -> [UInt8] {
        let stored = try edits.image.map(images.keep)
        do {
            return try pool.withTransaction { connection -> [UInt8] in
                try connection.query(ChangeLog.lock(posts: [id]))
                let owned = try lockOwned(id, by: caller, on: connection)
                let previous = owned.imageURL
                let title: String? = edits.title
                let summary: String? = edits.summary
                let body: String? = edits.body
                let mentions = try Self.mentions(after: edits, of: owned, on: connection)
                let changesLocation: Bool = edits.locationTag != nil
                let location: String? = edits.locationTag.flatMap { $0 }
                let imageURL: String? = stored?.url
                let imageWidth: Int32? = stored.map { Int32($0.width) }
                let imageHeight: Int32? = stored.map { Int32($0.height) }
                let query: SQLQuery = """
                    WITH p AS (
                        UPDATE posts SET
                            title = coalesce(\(title)::text, title),
                            summary = coalesce(\(summary)::text, summary),
                            body = coalesce(\(body)::text, body),
                            location_tag = CASE WHEN \(changesLocation) THEN \(location)::text ELSE location_tag END,
                            image_url = coalesce(\(imageURL)::text, image_url),
                            image_width = CASE WHEN \(imageURL)::text IS NULL THEN image_width ELSE \(imageWidth)::int END,
                            image_height = CASE WHEN \(imageURL)::text IS NULL THEN image_height ELSE \(imageHeight)::int END,
                            mentions = CASE WHEN \(mentions.changed) THEN \(mentions.column)::json ELSE mentions END
                        WHERE id = \(id) RETURNING *
                    ), recorded AS (\(ChangeLog.record(ChangeRecord(
                        kind: .postUpdated, postID: "p.id", parentID: "p.parent_id", userID: "\(caller.userID)",
                        data: [("post", "\(unsafeSQL: PostShape.json)")],
                        source: "FROM p \(unsafeSQL: PostShape.authorJoin)"))))
                    SELECT \(unsafeSQL: PostShape.columns)\(PostShape.likedByMe(caller: caller))
                    FROM p \(unsafeSQL: PostShape.authorJoin)
                    """
                guard let post = try Self.single(connection.query(query), withLiked: true) else {
                    throw APIError.notFound("no such post")
                }
                // The image it replaced, if any (the same URL again is no replacement).
                if stored != nil, previous != stored?.url { try images.drop([previous], on: connection) }
                return post
            }
        } catch {
            images.remove(url: stored?.url)
            throw error
        }
    }

    /// The post, read without a lock (no write, so no xid yet: see ChangeLog): 404 if there
    /// is none, 403 if it is another's.
    func owned(_ id: Int64, by caller: Caller, on connection: PostgresConnection) throws -> OwnedPost {
        try checkOwner(connection.query("SELECT user_id, parent_id, image_url, deleted, NULL::text AS mentions FROM posts WHERE id = \(id)").first, caller)
    }

    struct OwnedPost {
        let parentID: Int64?
        let imageURL: String?
        /// The `mentions` column as it was (read by `lockOwned`, for an edit).
        var mentions: String? = nil
    }

    /// An edit's mentions: the edited fields parsed again (names resolved as of now), the
    /// others' kept as they were (a mention of a user renamed since stays theirs). Nothing
    /// to write when no text field is edited.
    static func mentions(after edits: PostEdits, of post: OwnedPost,
                         on connection: PostgresConnection) throws -> (changed: Bool, column: String?) {
        let edited = [("title", edits.title), ("summary", edits.summary), ("body", edits.body)]
            .compactMap { field, text in text.map { (field: field, text: $0) } }
        guard !edited.isEmpty else { return (false, nil) }
        let fieldOrder = ["title", "summary", "body"]
        let editedFields = Set(edited.map(\.field))
        let kept = Mentions.decode(post.mentions).filter { !editedFields.contains($0.field) }
        let merged = (kept + (try Mentions.resolve(edited, on: connection))).sorted {
            ($0.field == $1.field) ? $0.start < $1.start
                : fieldOrder.firstIndex(of: $0.field)! < fieldOrder.firstIndex(of: $1.field)!
        }
        return (true, Mentions.column(merged))
    }

    /// The post, whoever wrote it (a moderator's removal): 404 if there is none, 410 for a
    /// tombstone.
    func existing(_ id: Int64, on connection: PostgresConnection) throws -> OwnedPost {
        guard let row = try connection.query("SELECT parent_id, image_url, deleted FROM posts WHERE id = \(id)").first else {
            throw APIError.notFound("no such post")
        }
        if try row.decode("deleted", as: Bool.self) { throw Self.tombstoneGone }
        return OwnedPost(parentID: try row.decode("parent_id"), imageURL: try row.decode("image_url"))
    }

    /// Locks the post's row for this transaction: 404 if there is none, 403 if it is another's.
    func lockOwned(_ id: Int64, by caller: Caller, on connection: PostgresConnection) throws -> OwnedPost {
        try checkOwner(connection.query("""
            SELECT user_id, parent_id, image_url, deleted, mentions::text AS mentions FROM posts WHERE id = \(id) FOR UPDATE
            """).first, caller)
    }

    /// 404 for no post, 410 for a tombstone, 403 for another's.
    private func checkOwner(_ row: PostgresRow?, _ caller: Caller) throws -> OwnedPost {
        guard let row else { throw APIError.notFound("no such post") }
        if try row.decode("deleted", as: Bool.self) { throw Self.tombstoneGone }
        guard try row.decode("user_id", as: Int64.self) == caller.userID else {
            throw APIError.forbidden("only the post's author may change it")
        }
        let mentions = row.withBytes(at: 4) { $0.map { String(decoding: $0, as: UTF8.self) } }
        return OwnedPost(parentID: try row.decode("parent_id"), imageURL: try row.decode("image_url"), mentions: mentions)
    }
}

/// What a create answers: what it made, or the first answer of a request retried with the
/// same `Idempotency-Key`.
enum Created: Sendable {
    case created([UInt8])
    case replayed(IdempotentRequest.FirstAnswer)
}
