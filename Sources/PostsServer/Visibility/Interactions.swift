import Postgres

/// The interaction half of the visibility policy: what a caller may do to another user's
/// thing (like it, comment on it, reply to it, post under it, move a post under it, follow
/// them), decided here and only here; `VisibilityWalkTests` walks every interaction ×
/// every reason end to end.
///
/// The rules (API.md "Safety"): a **suspension** makes the user's things unreadable, so acting
/// on them is 404, as for a thing that is not there; a **block** either way refuses what
/// would give something across it (403), while taking back what was given (an unlike, an
/// unfollow) stays allowed; a **mute** never stops anyone. A tombstone (a post kept from a
/// deleted account) is 410 for what would give it something.
///
/// A write statement says what it found with the SQL below (`actable` in the target's
/// `WHERE`, `blocked` as a column), and its service hands the row's flags to `check`. When a
/// write found nothing to act on and its statement cannot say why, `refusal(toActOn:)` reads
/// why after the fact (a write that succeeds never pays for that read).
extension Visibility {
    enum Interaction: String, CaseIterable, Sendable {
        case like, commentLike, comment, reply, childPost, reparent, follow

        /// What the 404 calls a target that is not there (or cannot be read).
        var missing: String {
            switch self {
            case .like, .comment: "no such post"
            case .childPost, .reparent: "no such parent post"
            case .commentLike, .reply: "no such comment"
            case .follow: "no such user"
            }
        }
    }

    /// Whether `reason` refuses `interaction`, and how (nil: it is allowed).
    static func refusal(by reason: Reason, of interaction: Interaction) -> APIError.Reason? {
        switch reason {
        case .suspension: .notFound
        case .block: .forbidden
        case .mute: nil
        }
    }

    /// ` AND …` for the target's row: its author (the SQL column `author`) is one whose
    /// things can be acted on at all (not suspended: otherwise the row is not found, 404).
    static func actable(author: String) -> SQLQuery {
        notSuspended(author)
    }

    /// Whether `author` (an SQL column) is on the other side of a block from `caller`, from
    /// the caller's sets (current: they came with the caller's proof).
    static func blocked(author: String, from caller: Caller) -> SQLQuery {
        "\(unsafeSQL: author) = ANY(\(caller.relations.blockedParameter))"
    }

    /// Whether two users (SQL expressions) are on the two sides of a block, from the table
    /// as it is now: for a write that must see a block made a moment ago by the other side
    /// (a follow, under both users' locks).
    static func blockedNow(between first: SQLQuery, and second: SQLQuery) -> SQLQuery {
        var query: SQLQuery = "EXISTS (SELECT 1 FROM blocks b WHERE (b.blocker_id = "
        query.append(first)
        query.append(" AND b.blocked_id = ")
        query.append(second)
        query.append(") OR (b.blocker_id = ")
        query.append(second)
        query.append(" AND b.blocked_id = ")
        query.append(first)
        query.append("))")
        return query
    }

    /// What a write's statement found of its target: whether there was one it may act on,
    /// whether it is a tombstone, whether it is across a block; `gives`: the act gives
    /// something (a like, a comment, a follow) rather than taking it back.
    struct Target: Sendable {
        var found: Bool
        var tombstone = false
        var blocked = false
        var gives = true
    }

    /// The one decision: nothing when the act is allowed, else its 404, 410 or 403.
    static func check(_ interaction: Interaction, _ target: Target) throws(APIError) {
        guard target.found else { throw APIError.notFound(interaction.missing) }
        guard target.gives else { return }
        if target.tombstone { throw tombstoneGone }
        if target.blocked { throw error(.forbidden, interaction) }
    }

    /// The refusal of `interaction` for `reason` as the API answers it.
    static func error(_ kind: APIError.Reason, _ interaction: Interaction) -> APIError {
        switch kind {
        case .notFound: APIError.notFound(interaction.missing)
        case .forbidden: blockedInteraction
        default: APIError(kind, interaction.missing)
        }
    }

    /// Why a write about a post (a like, a comment, a child, a move under it) found nothing
    /// to act on, read after the fact: 404 for no such post or one that cannot be read, 410
    /// for a tombstone, 403 across a block.
    static func refusal(toActOn postID: Int64?, _ interaction: Interaction, by caller: Caller,
                        on connection: PostgresConnection) throws -> APIError {
        guard let postID, let row = try connection.query("""
            SELECT deleted, \(blocked(author: "posts.user_id", from: caller)) AS blocked
            FROM posts WHERE id = \(postID)\(actable(author: "posts.user_id"))
            """).first else { return APIError.notFound(interaction.missing) }
        let target = Target(found: true, tombstone: try row.decode("deleted"), blocked: try row.decode("blocked"))
        do throws(APIError) {
            try check(interaction, target)
        } catch {
            return error
        }
        return APIError.notFound(interaction.missing)
    }

    /// Whether the user of the `users` row aliased `users` may act at all (sign in, use a
    /// token, be a caller): not suspended. Sign-in, the token lookup and the callers'
    /// proofs ask this, and nothing else.
    static func accountActive(_ users: String) -> SQLQuery {
        "\(unsafeSQL: users).suspended_at IS NULL"
    }

    /// The opposite of `accountActive`, as a column.
    static func accountSuspended(_ users: String) -> SQLQuery {
        "\(unsafeSQL: users).suspended_at IS NOT NULL"
    }

    /// What a suspended user's sign-in (or trust mode's email) is answered (API.md: 403).
    static let suspendedAccount = APIError.forbidden("this account is suspended")

    /// API.md: a tombstone cannot be edited, liked, commented on or posted under.
    static let tombstoneGone = APIError(.gone, "this post was removed with its author's account")

    static let blockedInteraction = APIError.forbidden("you cannot interact with this user's content: one of you blocked the other")
}
