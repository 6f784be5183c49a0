import Foundation
import HTTP
import Postgres

/// `GET /api/profiles/<user_id>`, `PATCH /api/profiles/me`, and the avatar's upload
/// (`PUT`/`DELETE /api/profiles/me/avatar`).
enum ProfileRoutes {
    /// `remote`: with federation, the user id of `user@domain` (API.md "Remote people").
    static func register(on routes: inout RouteTable, profiles: ProfileService, images: ImageStore,
                         blockedWords: BlockedWords, remote: (@Sendable (String) throws -> Int64)? = nil) {
        let profiles = PerRequest(profiles)
        routes.get("/api/profiles/:user_id", etag: true) { _, context in
            let parameter = try context.parameters.require("user_id", as: String.self)
            let decoded = parameter.removingPercentEncoding ?? parameter
            let userID: Int64
            if decoded.hasPrefix("@") {
                guard let remote else { throw APIError.notFound("no such profile") }
                userID = try remote(String(decoded.dropFirst()))
            } else {
                userID = try context.parameters.require("user_id", as: Int64.self)
            }
            guard let profile = try profiles(context).profile(of: userID, caller: context.caller) else { throw APIError.notFound("no such profile") }
            return answer(profile)
        }

        routes.patch("/api/profiles/me", access: .required) { request, context in
            let caller = try context.requireCaller()
            let patch = try RequestFields.decode(ProfilePatch.self, from: request).validated()
            try blockedWords.check(patch.username, patch.fullName, patch.bio)
            return answer(try profiles(context).update(caller.userID, with: patch))
        }

        routes.put("/api/profiles/me/avatar", access: .required,
                   body: .multipart(.images(in: images.directory))) { request, context in
            let caller = try context.requireCaller()
            guard let file = request.form?.file(named: "image") else {
                throw APIError.invalid("image is required: a multipart file part named image")
            }
            try context.http.requireHeavyLane()
            let stored = try images.keepAvatar(file)
            do {
                return answer(try profiles(context).update(caller.userID, with: ProfilePatch(avatar: .set(stored.url))))
            } catch {
                images.remove(url: stored.url)
                throw error
            }
        }

        routes.delete("/api/profiles/me/avatar", access: .required) { _, context in
            let caller = try context.requireCaller()
            return answer(try profiles(context).update(caller.userID, with: ProfilePatch(avatar: .clear)))
        }
    }

    private static func answer(_ profile: [UInt8]) -> Response {
        var answer = JSONObject.success()
        answer.addRaw("profile", profile)
        return answer.response()
    }
}
