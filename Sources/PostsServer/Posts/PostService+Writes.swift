import Postgres

/// Creating and editing posts, each in one transaction that keeps `child_count` and the
/// author's `posts_count` exact, says what happened (`post_created`, `post_updated`) and
/// records what follows (`EventEffects`) in the same statement. Image files are kept
/// (renamed into place) before the commit and removed again if it fails; images a commit
/// drops are queued for deletion in it. Deleting and moving are in `PostService+Tree`.
extension PostService {
    /// Creates a post: the post, or the first answer again for a retried key.
    func create(_ draft: PostDraft, by caller: Caller, idempotency: IdempotentRequest?) throws -> Created {
        let stored = try draft.image.map(images.keep)
        do {
            let outcome = try pool.withTransaction { connection -> Created in
                if let replay = try idempotency?.replay(on: connection) { return .replayed(replay) }
                // The locks in a statement of their own, before the insert: its fan-out reads
                // the author's followers with a snapshot taken after them (`FeedEffects`).
                var locks = WriteLocks.posts([draft.parentID])
                locks.add(profile: caller.userID, .shared)
                try Write.take(locks, on: connection)
                let post = try insert(draft, image: stored, by: caller, on: connection, committing: idempotency == nil)
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

    /// A post written in the caller's transaction, as its first write (federation's inbox:
    /// a remote account's Note); the post's JSON.
    func create(_ draft: PostDraft, by caller: Caller, on connection: PostgresConnection) throws -> [UInt8] {
        var locks = WriteLocks.posts([draft.parentID])
        locks.add(profile: caller.userID, .shared)
        try Write.take(locks, on: connection)
        return try insert(draft, image: nil, by: caller, on: connection, committing: false)
    }

    /// The row, the parent's count and the author's in one statement: no parent row, no
    /// post (404). The answer is the post as the change carries it, with `liked_by_me` false.
    private func insert(_ draft: PostDraft, image: ImageStore.Stored?, by caller: Caller,
                        on connection: PostgresConnection, committing: Bool) throws -> [UInt8] {
        let parentID: Int64? = draft.parentID
        let locationTag: String? = draft.locationTag
        let imageURL: String? = image?.url
        let imageWidth: Int32? = image.map { Int32($0.width) }
        let imageHeight: Int32? = image.map { Int32($0.height) }
        // No lookup at all when no field holds a candidate `@name` (most posts).
        let texts = [("title", draft.title), ("summary", draft.summary), ("body", draft.body)]
        let mentions = try Mentions.resolve(texts, on: connection)
        let tags = try Hashtags.resolve(texts, on: connection)
        var steps: [SQLQuery] = ["""
            parent AS (
                UPDATE posts SET child_count = child_count + 1
                WHERE id = \(parentID) AND NOT deleted AND NOT \(Visibility.blocked(author: "user_id", from: caller))
                  \(Visibility.actable(author: "posts.user_id"))
                RETURNING id, user_id, child_count
            )
            """, """
            p AS (
                INSERT INTO posts (user_id, parent_id, title, summary, body, image_url, image_width, image_height,
                                   timezone, location_tag, ai_generated, mentions, tags, created_at)
                SELECT \(caller.userID), \(parentID)::bigint, \(draft.title), \(draft.summary), \(draft.body),
                       \(imageURL)::text, \(imageWidth)::int, \(imageHeight)::int,
                       \(draft.timezone), \(locationTag)::text, \(draft.aiGenerated), \(Mentions.column(mentions))::json,
                       \(Hashtags.column(tags))::json, \(effects.clock.now)
                WHERE \(parentID)::bigint IS NULL OR EXISTS (SELECT 1 FROM parent)
                RETURNING *
            )
            """, """
            counted AS (
                UPDATE profiles pr SET posts_count = posts_count + 1 WHERE user_id = \(caller.userID) AND EXISTS (SELECT 1 FROM p)
                RETURNING pr.*
            )
            """]
        if !tags.isEmpty { steps += Hashtags.postTagging(Hashtags.names(tags), edit: false, at: effects.clock.now) }
        // The locks were taken in a statement of their own (see `create`).
        let write = Write(
            locking: .held, steps: steps,
            events: [(.postCreated, EventTable.postCreated.cte([
                "seq": "1", "post": "p.id", "author": "p.user_id", "parent": "p.parent_id", "parent_author": "parent.user_id",
                "parent_child_count": "parent.child_count", "created_at": "p.created_at", "json": "\(unsafeSQL: PostShape.json)",
                "mentioned": "\(PostgresArray(mentions.map(\.userID)))",
            ], "FROM p \(unsafeSQL: PostShape.authorJoin) LEFT JOIN parent ON true"))],
            profilesCounted: "counted",
            answer: "SELECT \(unsafeSQL: PostShape.columns), false AS liked_by_me FROM p \(unsafeSQL: PostShape.authorJoin)")
        let result: PostgresResult
        do {
            result = try effects.run(write, on: connection, committing: committing)
        } catch let error as PostgresError where error.sqlState == .foreignKeyViolation {
            // The parent, deleted between our update of it and the insert's own check.
            throw APIError.notFound(Visibility.Interaction.childPost.missing)
        }
        guard let post = try Self.single(result, withLiked: true) else {
            throw try Visibility.refusal(toActOn: parentID, .childPost, by: caller, on: connection)
        }
        return post
    }

    /// Changes what the edits name; only the author may (403), and only an existing post (404).
    func update(_ id: Int64, with edits: PostEdits, by caller: Caller) throws -> [UInt8] {
        let stored = try edits.image.map(images.keep)
        do {
            return try pool.withTransaction { connection -> [UInt8] in
                try edit(id, with: edits, image: stored, by: caller, on: connection, committing: true)
            }
        } catch {
            images.remove(url: stored?.url)
            throw error
        }
    }

    /// The same in the caller's transaction, as its first write (federation's inbox: the
    /// Update of a remote account's Note); no image.
    func update(_ id: Int64, with edits: PostEdits, by caller: Caller, on connection: PostgresConnection) throws -> [UInt8] {
        try edit(id, with: edits, image: nil, by: caller, on: connection, committing: false)
    }

    private func edit(_ id: Int64, with edits: PostEdits, image stored: ImageStore.Stored?, by caller: Caller,
                      on connection: PostgresConnection, committing: Bool) throws -> [UInt8] {
        try Write.take(.posts([id]), on: connection)
        let owned = try lockOwned(id, by: caller, on: connection)
        let previous = owned.imageURL
        // The image it replaced, if any (the same URL again is no replacement).
        if stored != nil, previous != stored?.url { try images.drop([previous], on: connection) }
        let title: String? = edits.title
        let summary: String? = edits.summary
        let body: String? = edits.body
        let editedTexts = Self.editedTexts(edits)
        let mentions = try Self.mentions(after: editedTexts, keeping: owned.mentions, on: connection)
        let tags = try Hashtags.after(editedTexts, keeping: owned.tags, on: connection)
        let before = Set(Mentions.decode(owned.mentions).map(\.userID))
        let after = mentions.map { Set($0.map(\.userID)) } ?? before
        let changesLocation: Bool = edits.locationTag != nil
        let location: String? = edits.locationTag.flatMap { $0 }
        let imageURL: String? = stored?.url
        let imageWidth: Int32? = stored.map { Int32($0.width) }
        let imageHeight: Int32? = stored.map { Int32($0.height) }
        var steps: [SQLQuery] = ["""
            p AS (
                UPDATE posts SET
                    title = coalesce(\(title)::text, title),
                    summary = coalesce(\(summary)::text, summary),
                    body = coalesce(\(body)::text, body),
                    location_tag = CASE WHEN \(changesLocation) THEN \(location)::text ELSE location_tag END,
                    image_url = coalesce(\(imageURL)::text, image_url),
                    image_width = CASE WHEN \(imageURL)::text IS NULL THEN image_width ELSE \(imageWidth)::int END,
                    image_height = CASE WHEN \(imageURL)::text IS NULL THEN image_height ELSE \(imageHeight)::int END,
                    mentions = CASE WHEN \(mentions != nil) THEN \(mentions.map { Mentions.column($0) } ?? nil)::json
                                    ELSE mentions END,
                    tags = CASE WHEN \(tags != nil) THEN \(tags.map { Hashtags.column($0) } ?? nil)::json ELSE tags END
                WHERE id = \(id) RETURNING *
            )
            """]
        if let tags { steps += Hashtags.postTagging(Hashtags.names(tags), edit: true, at: effects.clock.now) }
        let write = Write(
            locking: .held, steps: steps,
            events: [(.postUpdated, EventTable.postUpdated.cte([
                "seq": "1", "post": "p.id", "parent": "p.parent_id", "actor": "\(caller.userID)",
                "json": "\(unsafeSQL: PostShape.json)", "moved": "false", "old_parent": "NULL",
                "mentions_added": "\(PostgresArray(after.subtracting(before).sorted()))",
                "mentions_removed": "\(PostgresArray(before.subtracting(after).sorted()))",
            ], "FROM p \(unsafeSQL: PostShape.authorJoin)"))],
            answer: """
                SELECT \(unsafeSQL: PostShape.columns)\(PostShape.likedByMe(caller: caller))
                FROM p \(unsafeSQL: PostShape.authorJoin)
                """)
        guard let post = try Self.single(effects.run(write, on: connection, committing: committing), withLiked: true) else {
            throw APIError.notFound("no such post")
        }
        return post
    }

    /// The post, read without a lock (no write, so no xid yet: see ChangeLog): 404 if there
    /// is none, 403 if it is another's.
    func owned(_ id: Int64, by caller: Caller, on connection: PostgresConnection) throws -> OwnedPost {
        try checkOwner(connection.query("""
            SELECT user_id, parent_id, image_url, deleted, NULL::text AS mentions, NULL::text AS tags FROM posts WHERE id = \(id)
            """).first, caller)
    }

    struct OwnedPost {
        let parentID: Int64?
        let imageURL: String?
        /// The `mentions` and `tags` columns as they were (read by `lockOwned`, for an edit).
        var mentions: String? = nil
        var tags: String? = nil
    }

    /// The text fields an edit changes.
    static func editedTexts(_ edits: PostEdits) -> [(field: String, text: String)] {
        [("title", edits.title), ("summary", edits.summary), ("body", edits.body)]
            .compactMap { field, text in text.map { (field: field, text: $0) } }
    }

    /// An edit's mentions: the edited fields parsed again (names resolved as of now), the
    /// others' kept as they were. nil (no change) when no text field is edited.
    static func mentions(after edited: [(field: String, text: String)], keeping old: String?,
                         on connection: PostgresConnection) throws -> [Mention]? {
        guard !edited.isEmpty else { return nil }
        return TextSpans.merge(kept: Mentions.decode(old), parsed: try Mentions.resolve(edited, on: connection),
                               editedFields: Set(edited.map(\.field)))
    }

    /// The post, whoever wrote it (a moderator's removal): 404 if there is none, 410 for a
    /// tombstone.
    func existing(_ id: Int64, on connection: PostgresConnection) throws -> OwnedPost {
        guard let row = try connection.query("SELECT parent_id, image_url, deleted FROM posts WHERE id = \(id)").first else {
            throw APIError.notFound("no such post")
        }
        if try row.decode("deleted", as: Bool.self) { throw Visibility.tombstoneGone }
        return OwnedPost(parentID: try row.decode("parent_id"), imageURL: try row.decode("image_url"))
    }

    /// Locks the post's row for this transaction: 404 if there is none, 403 if it is another's.
    func lockOwned(_ id: Int64, by caller: Caller, on connection: PostgresConnection) throws -> OwnedPost {
        try checkOwner(connection.query("""
            SELECT user_id, parent_id, image_url, deleted, mentions::text AS mentions, tags::text AS tags
            FROM posts WHERE id = \(id) FOR UPDATE
            """).first, caller)
    }

    /// 404 for no post, 410 for a tombstone, 403 for another's.
    private func checkOwner(_ row: PostgresRow?, _ caller: Caller) throws -> OwnedPost {
        guard let row else { throw APIError.notFound("no such post") }
        if try row.decode("deleted", as: Bool.self) { throw Visibility.tombstoneGone }
        guard try row.decode("user_id", as: Int64.self) == caller.userID else {
            throw APIError.forbidden("only the post's author may change it")
        }
        let mentions: String? = try row.decode("mentions")
        let tags: String? = try row.decode("tags")
        return OwnedPost(parentID: try row.decode("parent_id"), imageURL: try row.decode("image_url"), mentions: mentions,
                         tags: tags)
    }
}

/// What a create answers: what it made, or the first answer of a request retried with the
/// same `Idempotency-Key`.
enum Created: Sendable {
    case created([UInt8])
    case replayed(IdempotentRequest.FirstAnswer)
}
