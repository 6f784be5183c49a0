import Postgres

/// The visibility policy (API.md "Safety"): who may see whose things where, in one table,
/// as Discourse's Guardian does it. Every surface that shows one user's things to another
/// builds its SQL (or its in-memory filter) from here, and a test walks every surface ×
/// every reason (`VisibilityWalkTests`), so a new surface cannot be added without saying
/// what hides on it.
///
/// The reasons: a **block** hides two users from each other everywhere (both ways); a
/// **mute** hides the muted user from the muter's lists, feeds, streams and notifications,
/// not from a single read (the muted user's post is still there when asked for by id); a
/// **suspension** hides the user's things from everyone, everywhere, until it is lifted.
/// Anonymous readers are hidden nothing but suspensions. What a caller may *do* to another
/// user's thing (like, comment, reply, post under, follow) is the policy's other half,
/// `Interactions.swift`.
///
/// Reads bind the viewer's sets as arrays (they came with the caller: no round trip; with
/// none in play the statement is an anonymous read's). What runs with no viewer's sets at
/// hand (a notification being written, a push being delivered) reads the tables.
enum Visibility {
    enum Surface: String, CaseIterable, Sendable {
        /// Pages of posts: recent, by parent, by author, children.
        case postList
        /// A post read by id, its ancestors, and the post a page of children, comments or
        /// likers hangs from (404 when hidden).
        case postRead
        case feed
        /// A post's comments, a comment's replies.
        case commentList
        /// The comment a page of replies hangs from (404 when hidden).
        case commentRead
        case likers
        /// Followers and following pages.
        case people
        /// The notification list and its unread count.
        case notifications
        case notificationStream
        case push
        /// `/api/changes`.
        case changes
        /// `/api/events`.
        case eventStream
        /// Search (posts and people) and tag pages.
        case search
    }

    enum Reason: String, CaseIterable, Sendable {
        case block, mute, suspension
    }

    /// The table: whether `reason` hides an author's things from a viewer on `surface`.
    static func hides(_ reason: Reason, on surface: Surface) -> Bool {
        switch reason {
        case .block, .suspension:
            return true
        case .mute:
            switch surface {
            case .postRead, .commentRead: return false
            case .postList, .feed, .commentList, .likers, .people, .notifications, .notificationStream, .push, .changes,
                 .eventStream, .search: return true
            }
        }
    }

    /// The users whose things `relations`' owner may not see on `surface` (suspensions are
    /// the SQL's: they are no viewer's own).
    static func hiddenUsers(on surface: Surface, _ relations: Relations) -> [Int64] {
        hides(.mute, on: surface) ? relations.hiddenInLists : relations.blocked
    }

    /// ` AND …`: what `viewer` may see on `surface` of the things whose author is in the SQL
    /// column `author`. `suspendedFlag`: the author's `profiles.suspended`, when the query
    /// joins the profile anyway (`pr.suspended` for `author_name`); without it, a probe
    /// into the partial index of suspended users (migration 0012), empty on most instances.
    static func visible(on surface: Surface, author: String, to viewer: Caller?, suspendedFlag: String? = nil) -> SQLQuery {
        var condition: SQLQuery = ""
        if let relations = viewer?.relations {
            let hidden = hides(.mute, on: surface) ? relations.hiddenInListsParameter : relations.blockedParameter
            if !hiddenUsers(on: surface, relations).isEmpty {
                condition.append(" AND \(unsafeSQL: author) <> ALL(\(hidden))")
            }
        }
        if let suspendedFlag {
            condition.append(" AND \(unsafeSQL: suspendedFlag) IS NOT TRUE")
        } else {
            condition.append(notSuspended(author))
        }
        return condition
    }

    /// ` AND …`: the user in `column` is not suspended (a probe; see `visible`).
    static func notSuspended(_ column: String) -> SQLQuery {
        " AND NOT EXISTS (SELECT 1 FROM profiles suspended WHERE suspended.user_id = \(unsafeSQL: column) AND suspended.suspended)"
    }

    /// What `viewer` (a column) may see of `author` (a column) on `surface`, read from the
    /// tables as things are now: for a notification being written or a push being sent.
    /// (Suspension: the author's profile flag, `suspendedFlag`, or a probe.)
    static func visibleNow(on surface: Surface, author: String, viewer: String, suspendedFlag: String? = nil) -> SQLQuery {
        var condition: SQLQuery = " AND NOT "
        condition.append(blockedNow(between: SQLQuery(unsafeSQL: viewer), and: SQLQuery(unsafeSQL: author)))
        if hides(.mute, on: surface) {
            condition.append("""
                 AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.muter_id = \(unsafeSQL: viewer) AND m.muted_id = \(unsafeSQL: author))
                """)
        }
        if let suspendedFlag {
            condition.append(" AND \(unsafeSQL: suspendedFlag) IS NOT TRUE")
        } else {
            condition.append(notSuspended(author))
        }
        return condition
    }

    /// Whether `actor`'s act may notify `recipient` (SQL expressions of their ids), as the
    /// notification is written: what the notification list would show, and only to someone
    /// there is (a profile that is not the reserved user, a tombstone's owner who never
    /// signs in).
    static func notifiable(recipient: String, actor: String) -> SQLQuery {
        var condition: SQLQuery = """
            EXISTS (SELECT 1 FROM profiles told WHERE told.user_id = \(unsafeSQL: recipient)
                                                 AND told.username <> \(ReservedUser.username))
            """
        condition.append(visibleNow(on: .notifications, author: actor, viewer: recipient))
        return condition
    }

}
