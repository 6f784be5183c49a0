import Foundation

/// Comments (API.md "Comments").
extension PostsClient {
    /// A post's comments, oldest first.
    public func comments(on postID: Int, pageSize: Int = 50) -> PageSequence<Comment> {
        pages(of: CommentsEnvelope.self, "/api/posts/\(postID)/comments", pageSize: pageSize) {
            Page(items: $0.comments, nextCursor: $0.nextCursor)
        }
    }

    /// Adds a comment (1…2,200 characters after trimming). Carries an `Idempotency-Key`
    /// made for this call: a retry after a lost answer does not comment twice.
    @discardableResult
    public func addComment(_ body: String, to postID: Int) async throws -> Comment {
        let request = try APIRequest.json("POST", "/api/posts/\(postID)/comments", [("body", .string(body))]).idempotent()
        return try await send(request, as: CommentEnvelope.self).comment
    }

    /// Deletes one of the caller's comments (`forbidden` for another user's).
    public func deleteComment(id: UUID) async throws {
        _ = try await send(APIRequest("DELETE", "/api/comments/\(id.uuidString.lowercased())"), as: SuccessEnvelope.self)
    }
}
