/// The success answers' shapes, as decoded before the client hands out what they carry.
/// Internal: the public API returns the models, pages and sequences.
struct PostEnvelope: Decodable { let post: Post }

struct PostsPageEnvelope: Decodable {
    let posts: [Post]
    let nextCursor: String?
    enum CodingKeys: String, CodingKey { case posts, nextCursor = "next_cursor" }
}

struct ChildrenEnvelope: Decodable {
    let postID: Int
    let children: [Post]
    let count: Int
    let nextCursor: String?
    enum CodingKeys: String, CodingKey { case postID = "post_id", children, count, nextCursor = "next_cursor" }
}

struct AncestorsEnvelope: Decodable {
    let ancestors: [Post]
}

struct ProfileEnvelope: Decodable { let profile: Profile }

struct LikersEnvelope: Decodable {
    let likeCount: Int
    let profiles: [Profile]
    let nextCursor: String?
    enum CodingKeys: String, CodingKey { case likeCount = "like_count", profiles, nextCursor = "next_cursor" }
}

/// A plain page of profiles: the caller's blocks and mutes.
struct ProfilesPageEnvelope: Decodable {
    let profiles: [Profile]
    let nextCursor: String?
    enum CodingKeys: String, CodingKey { case profiles, nextCursor = "next_cursor" }
}

struct CommentEnvelope: Decodable { let comment: Comment }

struct CommentsEnvelope: Decodable {
    let comments: [Comment]
    /// The post's comment count, not this page's.
    let count: Int
    let nextCursor: String?
    enum CodingKeys: String, CodingKey { case comments, count, nextCursor = "next_cursor" }
}

struct RepliesEnvelope: Decodable {
    let replies: [Comment]
    let nextCursor: String?
    enum CodingKeys: String, CodingKey { case replies, nextCursor = "next_cursor" }
}

struct ChangesEnvelope: Decodable {
    let changes: [Change]
    let nextSince: String
    let hasMore: Bool
    enum CodingKeys: String, CodingKey { case changes, nextSince = "next_since", hasMore = "has_more" }
}

struct ReportEnvelope: Decodable { let report: Report }

struct ModerationReportsEnvelope: Decodable {
    let reports: [ModerationReport]
    let nextCursor: String?
    enum CodingKeys: String, CodingKey { case reports, nextCursor = "next_cursor" }
}

struct ModerationLogEnvelope: Decodable {
    let entries: [ModerationLogEntry]
    let nextCursor: String?
    enum CodingKeys: String, CodingKey { case entries, nextCursor = "next_cursor" }
}

struct NotificationsPageEnvelope: Decodable {
    let notifications: [PostsNotification]
    /// The caller's unread notifications, not this page's.
    let unreadCount: Int
    let nextCursor: String?
    enum CodingKeys: String, CodingKey { case notifications, unreadCount = "unread_count", nextCursor = "next_cursor" }
}

struct UnreadCountEnvelope: Decodable {
    let unreadCount: Int
    enum CodingKeys: String, CodingKey { case unreadCount = "unread_count" }
}

struct MailboxEnvelope: Decodable { let messages: [MailboxMessage] }

/// An answer whose only news is that it succeeded (`{"status":"success"}`).
struct SuccessEnvelope: Decodable { let status: String }

/// A page of search: its items are under `posts`, `profiles` or `tags`, as the search's
/// type says; the one of them present is the page.
struct SearchPageEnvelope<Item: Decodable & Sendable>: Decodable, Sendable {
    let items: [Item]
    let nextCursor: String?

    enum CodingKeys: String, CodingKey { case posts, profiles, tags, nextCursor = "next_cursor" }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let key = [CodingKeys.posts, .profiles, .tags].first(where: container.contains) else {
            throw DecodingError.keyNotFound(CodingKeys.posts, .init(codingPath: decoder.codingPath,
                debugDescription: "A search answer holds posts, profiles or tags"))
        }
        items = try container.decode([Item].self, forKey: key)
        nextCursor = try container.decodeIfPresent(String.self, forKey: .nextCursor)
    }
}

struct TagEnvelope: Decodable { let tag: TagSummary }

struct TrendingTagsEnvelope: Decodable { let tags: [TrendingTag] }
