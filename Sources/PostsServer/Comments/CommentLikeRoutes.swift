import Foundation
import HTTP

/// `PUT`/`DELETE /api/comments/<comment_id>/like` (API.md "Comment likes").
enum CommentLikeRoutes {
    static func register(on routes: inout RouteTable, likes: CommentLikeService) {
        let likes = PerRequest(likes)
        routes.put("/api/comments/:comment_id/like", access: .required) { _, context in
            try set(true, context)
        }
        routes.delete("/api/comments/:comment_id/like", access: .required) { _, context in
            try set(false, context)
        }

        @Sendable func set(_ liked: Bool, _ context: AppContext) throws -> Response {
            let id = try CommentRoutes.commentID(context)
            return answer(id, try likes(context).set(liked, comment: id, by: context.requireCaller()))
        }
    }

    private static func answer(_ id: UUID, _ state: CommentLikeService.State) -> Response {
        var answer = JSONObject.success()
        answer.add("comment_id", id.uuidString.lowercased())
        answer.add("liked", state.liked)
        answer.add("like_count", state.likeCount)
        return answer.response()
    }
}
