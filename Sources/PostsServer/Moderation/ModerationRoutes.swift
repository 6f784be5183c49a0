import Foundation
import HTTP

/// `POST /api/reports` for everyone signed in, and the moderators' routes under
/// `/api/moderation` (403 for anyone else), API.md "Safety".
enum ModerationRoutes {
    static func register(on routes: inout RouteTable, reports: ReportService, moderation: ModerationService) {
        let reports = PerRequest(reports)
        let moderation = PerRequest(moderation)
        routes.post("/api/reports", access: .required) { request, context in
            let fields = try RequestFields.decode(ReportFields.self, from: request)
            let (report, created) = try reports(context).report(try fields.target(), reason: fields.reason ?? "",
                                                                details: fields.details ?? "", by: context.requireCaller())
            var answer = JSONObject.success()
            answer.addRaw("report", report)
            return answer.response(status: created ? .created : .ok)
        }

        routes.get("/api/moderation/reports", access: .required) { request, context in
            try moderation(context).requireModerator(context.requireCaller())
            let page = try moderation(context).queue(status: request.query["status"] ?? "open", PageRequest<KeysetCursor>(request.query))
            var answer = JSONObject.success()
            answer.addRaw("reports", page.json)
            answer.add("next_cursor", page.next)
            return answer.response()
        }

        routes.post("/api/moderation/reports/:id/resolve", access: .required) { request, context in
            let caller = try context.requireCaller()
            try moderation(context).requireModerator(caller)
            let id = try context.parameters.require("id", as: Int64.self)
            let fields = try RequestFields.decode(ResolveFields.self, from: request)
            guard let action = fields.action.flatMap(ModerationService.Action.init(rawValue:)) else {
                throw APIError.invalid("action must be dismiss, remove or suspend")
            }
            try moderation(context).resolve(id, action, note: try note(fields.note), by: caller)
            return JSONObject.success().response()
        }

        for suspended in [true, false] {
            routes.post("/api/moderation/users/:id/\(suspended ? "suspend" : "unsuspend")", access: .required) { request, context in
                let caller = try context.requireCaller()
                try moderation(context).requireModerator(caller)
                let id = try context.parameters.require("id", as: Int64.self)
                let fields = request.body.isEmpty ? NoteFields() : try RequestFields.decode(NoteFields.self, from: request)
                try moderation(context).setSuspended(suspended, user: id, note: try note(fields.note), by: caller)
                var answer = JSONObject.success()
                answer.add("user_id", id)
                answer.add("suspended", suspended)
                return answer.response()
            }
        }

        routes.get("/api/moderation/log", access: .required) { request, context in
            try moderation(context).requireModerator(context.requireCaller())
            let page = try ModerationLog.page(PageRequest<KeysetCursor>(request.query), pool: moderation(context).pool)
            var answer = JSONObject.success()
            answer.addRaw("entries", page.json)
            answer.add("next_cursor", page.next?.text)
            return answer.response()
        }
    }

    static let maxNote = 1000

    private static func note(_ text: String?) throws(APIError) -> String {
        let note = text?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard note.count <= maxNote else { throw .invalid("note must be at most \(maxNote) characters") }
        return note
    }

    private struct ReportFields: Decodable {
        let postID: Int64?
        let commentID: String?
        let userID: Int64?
        let reason: String?
        let details: String?

        enum CodingKeys: String, CodingKey {
            case postID = "post_id", commentID = "comment_id", userID = "user_id", reason, details
        }

        /// Exactly one of the three (422 otherwise).
        func target() throws(APIError) -> ReportService.Target {
            switch (postID, commentID, userID) {
            case (let id?, nil, nil): return .post(id)
            case (nil, let text?, nil):
                guard let id = UUID(uuidString: text) else { throw .notFound("no such comment") }
                return .comment(id)
            case (nil, nil, let id?): return .user(id)
            default: throw .invalid("name exactly one of post_id, comment_id and user_id")
            }
        }
    }

    private struct ResolveFields: Decodable {
        let action: String?
        let note: String?
    }

    private struct NoteFields: Decodable {
        var note: String?
    }
}
