import Foundation
import HTTP

/// API.md "Sessions and the account": the caller's sessions, the export of its data and
/// the deletion of its account.
enum AccountRoutes {
    static func register(on routes: inout RouteTable, sessions: Sessions, export: AccountExport, deletion: AccountDeletion) {
        let sessions = PerRequest(sessions)
        let export = PerRequest(export)
        let deletion = PerRequest(deletion)
        routes.get("/api/me/sessions", access: .required) { _, context in
            var answer = JSONObject.success()
            answer.addRaw("sessions", try sessions(context).list(of: context.requireCaller()))
            return answer.response()
        }

        routes.delete("/api/me/sessions/:id", access: .required) { _, context in
            let id = try context.parameters.require("id", as: Int64.self)
            guard try sessions(context).revoke(id, of: context.requireCaller()) else { throw APIError.notFound("no such session") }
            return JSONObject.success().response()
        }

        routes.delete("/api/me/sessions", access: .required) { _, context in
            var answer = JSONObject.success()
            answer.add("revoked", try sessions(context).revokeOthers(of: context.requireCaller()))
            return answer.response()
        }

        routes.get("/api/me/export", access: .required) { _, context in
            let path = try export(context).export(for: context.requireCaller())
            // Opened, then unlinked: the descriptor keeps it readable until it is sent.
            let file = FileBody.open(path: path)
            unlink(path)
            guard let file else { throw APIError(.failed, "the export could not be read back") }
            return Response(headers: HTTPHeaders([
                ("Content-Type", Response.jsonContentType),
                ("Content-Disposition", #"attachment; filename="posts-export.json""#),
                ("Cache-Control", "no-store"),
            ]), body: .file(file))
        }

        routes.delete("/api/me", access: .required) { _, context in
            try deletion(context).delete(context.requireCaller().userID)
            return JSONObject.success().response()
        }
    }
}
