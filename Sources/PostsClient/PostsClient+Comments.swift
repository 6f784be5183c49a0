import Foundation

/// Comments, their threads and their likes (API.md "Comments", "Threaded comments",
/// "Comment likes").
extension PostsClient {
    /// A post's top-level comments, oldest first (each with its `replyCount`); with
    /// `includingReplies`, every comment, replies included, as one flat list.
    public func comments(on postID: Int, includingReplies: Bool = false, pageSize: Int = 50) -> PageSequence<Comment> {
        pages(of: CommentsEnvelope.self, "/api/posts/\(postID)/comments", query: includingReplies ? [("all", "true")] : [],
              pageSize: pageSize) {
            Page(items: $0.comments, nextCursor: $0.nextCursor)
        }
    }

    /// A comment's replies, oldest first.
    public func replies(to commentID: UUID, pageSize: Int = 50) -> PageSequence<Comment> {
        pages(of: RepliesEnvelope.self, "/api/comments/\(commentID.uuidString.lowercased())/replies", pageSize: pageSize) {
            Page(items: $0.replies, nextCursor: $0.nextCursor)
        }
    }

    /// Adds a comment (1…2,200 characters after trimming), or a reply to `replyTo`, a
    /// comment of the same post (a reply to a reply joins its thread). Carries an
    /// `Idempotency-Key` made for this call: a retry after a lost answer does not comment twice.
    @discardableResult
    public func addComment(_ body: String, to postID: Int, replyTo: UUID? = nil) async throws -> Comment {
        var fields: [(String, JSONValue)] = [("body", .string(body))]
        if let replyTo { fields.append(("reply_to", .string(replyTo.uuidString.lowercased()))) }
        let request = try APIRequest.json("POST", "/api/posts/\(postID)/comments", fields).idempotent()
        return try await send(request, as: CommentEnvelope.self).comment
    }

    /// Deletes one of the caller's comments (`forbidden` for another user's); a top-level
    /// comment's replies go with it.
    public func deleteComment(id: UUID) async throws {
        _ = try await send(APIRequest("DELETE", "/api/comments/\(id.uuidString.lowercased())"), as: SuccessEnvelope.self)
    }

    /// Likes a comment; idempotent.
    @discardableResult
    public func likeComment(id: UUID) async throws -> CommentLikeState {
        try await send(APIRequest("PUT", "/api/comments/\(id.uuidString.lowercased())/like"))
    }

    /// Takes a comment's like back; idempotent.
    @discardableResult
    public func unlikeComment(id: UUID) async throws -> CommentLikeState {
        try await send(APIRequest("DELETE", "/api/comments/\(id.uuidString.lowercased())/like"))
    }
}

/// The answer to a comment's like and unlike: whether the caller likes it now, and its
/// exact like count.
public struct CommentLikeState: Codable, Sendable, Equatable {
    public let commentID: UUID
    public let liked: Bool
    public let likeCount: Int

    enum CodingKeys: String, CodingKey {
        case commentID = "comment_id"
        case liked
        case likeCount = "like_count"
    }

    public init(commentID: UUID, liked: Bool, likeCount: Int) {
        self.commentID = commentID
        self.liked = liked
        self.likeCount = likeCount
    }
}
