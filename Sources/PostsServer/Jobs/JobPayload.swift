import Postgres

/// Every job's payload, made and read here only: each kind's members are named once, for
/// the write that queues the job (in Swift, or in SQL within the write's own statement)
/// and for the handler that reads it back (in SQL, from the `jobs` row). A member renamed
/// here is renamed for both sides.
enum JobPayload {
    /// The members of all kinds' payloads.
    enum Member: String {
        /// `mail.send`: the `outbox` row to send.
        case outboxID = "outbox_id"
        /// `push.deliver`: the notification pushed, and the delivery id fixed when it was
        /// queued (the push service de-duplicates a retried delivery by it).
        case notificationID = "notification_id"
        case deliveryID = "delivery_id"
        /// `push.deliver`, once its direct pushes are queued (a retry of its webhook post
        /// queues them no more). `push.send`: the notification and the device token (the
        /// key of its `push_tokens` row).
        case expanded
        case platform, token
        /// `storage.delete`: the image's URL.
        case url
        /// `feed.fanout`: the post and its author; `before_at`/`before_id`, the follower it
        /// has reached (a keyset cursor: absent until the first batch).
        case post, author
        case beforeAt = "before_at"
        case beforeID = "before_id"
        /// `account.purge`: the account.
        case userID = "user_id"
        /// `federation.publish`: what to send (`OutgoingActivity.Kind`), who does it, and
        /// what it is of (a post, a comment, a followee, an inbound activity's id and its
        /// sender for an Accept). `federation.deliver`: the `outgoing_activities` row and
        /// the inbox it goes to.
        case activity, actor, comment, followee, inbox
        case activityID = "activity_id"
        case remoteActivity = "remote_activity"
    }

    // MARK: Made in Swift

    static func mail(outbox id: Int64) -> JSONObject {
        var payload = JSONObject()
        payload.add(Member.outboxID.rawValue, id)
        return payload
    }

    static func storageDeletion(url: String) -> JSONObject {
        var payload = JSONObject()
        payload.add(Member.url.rawValue, url)
        return payload
    }

    // MARK: Made in a write's statement (SQL expressions over its rows)

    static func push(notification: String) -> SQLQuery {
        object([(.notificationID, SQLQuery(unsafeSQL: notification)), (.deliveryID, "gen_random_uuid()")])
    }

    static func pushSend(notification: SQLQuery, platform: SQLQuery, token: SQLQuery) -> SQLQuery {
        object([(.notificationID, notification), (.platform, platform), (.token, token)])
    }

    /// The payload of the `jobs` row `row` with `member` set to true (a json column).
    static func marked(_ member: Member, in row: String) -> SQLQuery {
        SQLQuery(unsafeSQL: "(\(row).payload::jsonb || jsonb_build_object('\(member.rawValue)', true))::json")
    }

    /// Whether `member` is set in the payload of the `jobs` row `row`.
    static func has(_ member: Member, in row: String) -> SQLQuery {
        SQLQuery(unsafeSQL: "coalesce((\(row).payload ->> '\(member.rawValue)')::boolean, false)")
    }

    static func feedFanOut(post: SQLQuery, author: SQLQuery, before: (at: SQLQuery, id: SQLQuery)? = nil) -> SQLQuery {
        var members: [(Member, SQLQuery)] = [(.post, post), (.author, author)]
        if let before { members += [(.beforeAt, before.at), (.beforeID, before.id)] }
        return object(members)
    }

    static func federationPublish(kind: SQLQuery, actor: SQLQuery, post: SQLQuery? = nil, comment: SQLQuery? = nil,
                                  followee: SQLQuery? = nil, remoteActivity: SQLQuery? = nil) -> SQLQuery {
        var members: [(Member, SQLQuery)] = [(.activity, kind), (.actor, actor)]
        if let post { members.append((.post, post)) }
        if let comment { members.append((.comment, comment)) }
        if let followee { members.append((.followee, followee)) }
        if let remoteActivity { members.append((.remoteActivity, remoteActivity)) }
        return object(members)
    }

    static func federationDeliver(activity: String, inbox: String) -> SQLQuery {
        object([(.activityID, SQLQuery(unsafeSQL: activity)), (.inbox, SQLQuery(unsafeSQL: inbox))])
    }

    static func accountPurge(user: SQLQuery) -> SQLQuery {
        object([(.userID, user)])
    }

    // MARK: Read

    /// The member of the payload of the `jobs` row (or JSON value) `source` as text, cast
    /// to `type` when given: `(j.payload ->> 'post')::bigint`.
    static func member(_ member: Member, of source: String, as type: String? = nil) -> SQLQuery {
        let text = "(\(source) ->> '\(member.rawValue)')"
        return SQLQuery(unsafeSQL: type.map { "\(text)::\($0)" } ?? text)
    }

    private static func object(_ members: [(Member, SQLQuery)]) -> SQLQuery {
        var query: SQLQuery = "json_build_object("
        for (index, (member, value)) in members.enumerated() {
            if index > 0 { query.append(", ") }
            query.append(SQLQuery(unsafeSQL: "'\(member.rawValue)', "))
            query.append(value)
        }
        query.append(")")
        return query
    }
}
