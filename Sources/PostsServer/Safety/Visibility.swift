import Postgres

/// API.md: a block hides two users from each other in every read, and a mute hides the
/// muted user from the muter's lists. Reads add one condition on the author's column with
/// the caller's set bound as an array (the set came with the caller: no round trip); with
/// no blocks or mutes in play the statement is the same as an anonymous read's.
enum Visibility {
    /// ` AND <column> <> ALL(<users>)` for the users `caller` must not see here: in a list
    /// (`inList`: blocked or muted), or in a single read (blocked only: that is a 404).
    static func excluding(_ column: String, for caller: Caller?, inList: Bool) -> SQLQuery {
        guard let relations = caller?.relations else { return "" }
        guard !(inList ? relations.hiddenInLists : relations.blocked).isEmpty else { return "" }
        return " AND \(unsafeSQL: column) <> ALL(\(inList ? relations.hiddenInListsParameter : relations.blockedParameter))"
    }

    /// Leaves out a suspended user's posts or comments, for everyone: the author's profile,
    /// joined as `pr` for `author_name`, carries the flag (migration 0011).
    static let activeAuthor: SQLQuery = " AND pr.suspended IS NOT TRUE"

    /// The same for a query on posts without that join: the row's author (`column`). A
    /// probe into a partial index that holds only suspended users (migration 0012). Writes
    /// use it too: a suspended user's post cannot be liked, commented on or posted under
    /// (404, as it cannot be read).
    static func activeAuthor(of column: String) -> SQLQuery {
        " AND NOT EXISTS (SELECT 1 FROM profiles suspended WHERE suspended.user_id = \(unsafeSQL: column) AND suspended.suspended)"
    }

    /// Whether the notification `n` (its actor's profile joined as `pr`) is one its
    /// recipient may see as things are now: not from a suspended user, not across a block,
    /// not from someone the recipient muted. For a reader with no cached sets (a push being
    /// delivered), read from the tables.
    static let notificationShown: SQLQuery = """
         AND NOT pr.suspended
         AND NOT EXISTS (SELECT 1 FROM blocks b WHERE (b.blocker_id = n.recipient_id AND b.blocked_id = n.actor_id)
                                                  OR (b.blocker_id = n.actor_id AND b.blocked_id = n.recipient_id))
         AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.muter_id = n.recipient_id AND m.muted_id = n.actor_id)
        """

    /// Whether `actor`'s act may notify `recipient` (SQL expressions of their ids), read
    /// from the tables as the notification is written: not across a block, not from
    /// someone the recipient muted, not to the reserved user (a tombstone's owner).
    static func notifiable(recipient: String, actor: String) -> SQLQuery {
        """
        NOT EXISTS (SELECT 1 FROM blocks b WHERE (b.blocker_id = \(unsafeSQL: recipient) AND b.blocked_id = \(unsafeSQL: actor))
                                             OR (b.blocker_id = \(unsafeSQL: actor) AND b.blocked_id = \(unsafeSQL: recipient)))
        AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.muter_id = \(unsafeSQL: recipient) AND m.muted_id = \(unsafeSQL: actor))
        AND NOT EXISTS (SELECT 1 FROM profiles reserved WHERE reserved.user_id = \(unsafeSQL: recipient)
                                                          AND reserved.username = \(ReservedUser.username))
        """
    }

    /// 403 when the author of what the caller acts on is on the other side of a block.
    static func checkInteraction(with authorID: Int64, by caller: Caller) throws(APIError) {
        if caller.relations.blocked.contains(authorID) { throw blockedInteraction }
    }

    static let blockedInteraction = APIError.forbidden("you cannot interact with this user's content: one of you blocked the other")

    /// The same for a post the caller is about to like, comment on or post under. One
    /// lookup, only for a caller with blocks (a write: reads never pay it); a post that
    /// does not exist is the write's own 404.
    static func checkInteraction(withPost postID: Int64, by caller: Caller, pool: ConnectionPool) throws {
        guard !caller.relations.blocked.isEmpty else { return }
        let author = try pool.withConnection { connection in
            try connection.query("SELECT user_id FROM posts WHERE id = \(postID)").first?.decode("user_id", as: Int64.self)
        }
        if let author { try checkInteraction(with: author, by: caller) }
    }
}
