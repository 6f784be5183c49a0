import Foundation
import HTTP

/// `GET`/`POST /api/posts/<id>/comments` and `DELETE /api/comments/<comment_id>`.
enum CommentRoutes {
    static func register(on routes: inout RouteTable, comments: CommentService, blockedWords: BlockedWords) {
        routes.get("/api/posts/:id/comments", etag: true) { request, context in
            let id = try context.parameters.require("id", as: Int64.self)
            return try PostPageAnswer.make(id, comments.page(of: id, PageRequest<CommentCursor>(request.query), caller: context.caller),
                                           nextCursor: { $0.nextCursor?.text }) { page, answer in
                answer.addRaw("comments", page.json)
                answer.add("count", page.commentCount)
            }
        }

        routes.post("/api/posts/:id/comments", access: .required) { request, context in
            let id = try context.parameters.require("id", as: Int64.self)
            let caller = try context.requireCaller()
            let fields = try BodyFields(request)
            let body = try required(fields.string("body"), "body")
            try blockedWords.check(body)
            let idempotency = try IdempotentRequest(request, caller: caller, fields: fields)
            return try comments.add(body, to: id, by: caller, idempotency: idempotency).response(as: "comment")
        }

        routes.delete("/api/comments/:comment_id", access: .required) { _, context in
            // A malformed id names no comment: 404, as for one that does not exist.
            guard let text = context.parameters["comment_id"], let id = UUID(uuidString: text) else {
                throw APIError.notFound("no such comment")
            }
            try comments.delete(id, by: context.requireCaller())
            return JSONObject.success().response()
        }
    }
}
