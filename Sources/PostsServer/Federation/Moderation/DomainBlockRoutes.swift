import Foundation
import HTTP

/// `GET /api/moderation/domains`, `PUT`/`DELETE /api/moderation/domains/<domain>`
/// (`{"action":"block"|"silence","note"}`): admins only (API.md "Safety").
enum DomainBlockRoutes {
    private struct Fields: Decodable {
        let action: String?
        let note: String?
    }

    static func register(on routes: inout RouteTable, blocks: DomainBlocks, moderation: ModerationService) {
        routes.get("/api/moderation/domains", access: .required) { _, context in
            try moderation.requireAdmin(context.requireCaller())
            var answer = JSONObject.success()
            answer.add("domains", try blocks.list())
            return answer.response()
        }
        routes.put("/api/moderation/domains/:domain", access: .required,
                   body: .collect(limit: Configuration.UploadLimits.api.maxJSONBytes)) { request, context in
            let caller = try context.requireCaller()
            try moderation.requireAdmin(caller)
            let domain = try DomainBlocks.validated(try context.parameters.require("domain", as: String.self))
            let fields = try RequestFields.decode(Fields.self, from: request)
            guard let action = fields.action.flatMap(DomainBlocks.Action.init) else {
                throw APIError.invalid("action must be block or silence")
            }
            let note = fields.note?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            guard note.count <= ModerationRoutes.maxNote else { throw APIError.invalid("note must be at most \(ModerationRoutes.maxNote) characters") }
            var answer = JSONObject.success()
            answer.add("domain", try blocks.set(domain, action, note: note, by: caller))
            return answer.response()
        }
        routes.delete("/api/moderation/domains/:domain", access: .required) { _, context in
            let caller = try context.requireCaller()
            try moderation.requireAdmin(caller)
            let domain = try DomainBlocks.validated(try context.parameters.require("domain", as: String.self))
            guard try blocks.remove(domain, by: caller) else { throw APIError.notFound("\(domain) is neither blocked nor silenced") }
            return JSONObject.success().response()
        }
    }
}
