import Foundation
import HTTP

/// `GET`/`POST /api/posts/<id>/comments`, `GET /api/comments/<id>/replies` and
/// `DELETE /api/comments/<comment_id>`; the likes of comments are `CommentLikeRoutes`.
enum CommentRoutes {
    /// `clock`: the day an `Idempotency-Key` is remembered for.
    static func register(on routes: inout RouteTable, comments: CommentService, blockedWords: BlockedWords,
                         clock: ServerClock) {
        let comments = PerRequest(comments)
        routes.get("/api/posts/:id/comments", etag: true) { request, context in
            let id = try context.parameters.require("id", as: Int64.self)
            let all = try flag(request.query["all"], "all")
            return try PostPageAnswer.make(id, comments(context).page(of: id, all: all, PageRequest<CommentCursor>(request.query), caller: context.caller),
                                           nextCursor: { $0.nextCursor?.text }) { page, answer in
                answer.addRaw("comments", page.json)
                answer.add("count", page.count)
            }
        }

        routes.get("/api/comments/:comment_id/replies", etag: true) { request, context in
            let id = try commentID(context)
            guard let page = try comments(context).replies(of: id, PageRequest<CommentCursor>(request.query), caller: context.caller) else {
                throw APIError.notFound("no such comment")
            }
            var answer = JSONObject.success()
            answer.add("comment_id", id.uuidString.lowercased())
            answer.addRaw("replies", page.json)
            answer.add("reply_count", page.count)
            answer.add("next_cursor", page.nextCursor?.text)
            return answer.response()
        }

        routes.post("/api/posts/:id/comments", access: .required, coalesces: true) { request, context in
            let id = try context.parameters.require("id", as: Int64.self)
            let caller = try context.requireCaller()
            let fields = try BodyFields(request)
            let body = try required(fields.string("body"), "body")
            // A malformed id names no comment: 404, as for one that does not exist.
            let replyTo = try fields.string("reply_to").map { text throws(APIError) in
                guard let uuid = UUID(uuidString: text) else { throw APIError.notFound("no such comment") }
                return uuid
            }
            try blockedWords.check(body)
            let idempotency = try IdempotentRequest(request, caller: caller, fields: fields, clock: clock)
            return try comments(context).add(body, to: id, replyTo: replyTo, by: caller, idempotency: idempotency).response(as: "comment")
        }

        routes.delete("/api/comments/:comment_id", access: .required) { _, context in
            try comments(context).delete(commentID(context), by: context.requireCaller())
            return JSONObject.success().response()
        }
    }

    /// A malformed id names no comment: 404, as for one that does not exist.
    static func commentID(_ context: AppContext) throws(APIError) -> UUID {
        guard let text = context.parameters["comment_id"], let id = UUID(uuidString: text) else {
            throw APIError.notFound("no such comment")
        }
        return id
    }

    /// `true` or `false` (absent: false); anything else is 400.
    private static func flag(_ text: String?, _ name: String) throws(APIError) -> Bool {
        switch text {
        case nil, "false": false
        case "true": true
        default: throw APIError.malformed("\(name) must be true or false")
        }
    }
}
