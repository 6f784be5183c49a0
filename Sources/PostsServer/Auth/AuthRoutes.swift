import Foundation
import HTTP

/// `POST /api/auth/send-code`, `verify-code`, `logout` and `GET /api/me`: HTTP in and out,
/// the work in `AuthService`.
enum AuthRoutes {
    private struct SendCode: Decodable {
        let email: String?
    }

    private struct VerifyCode: Decodable {
        let email: String?
        let code: String?
        let deviceID: String?

        enum CodingKeys: String, CodingKey {
            case email, code, deviceID = "device_id"
        }
    }

    static let maxDeviceID = 200

    static func register(on routes: inout RouteTable, auth: AuthService, profiles: ProfileService) {
        let auth = PerRequest(auth)
        let profiles = PerRequest(profiles)
        routes.post("/api/auth/send-code", access: .open) { request, context in
            let fields = try RequestFields.decode(SendCode.self, from: request)
            try auth(context).sendCode(to: EmailAddress(required(fields.email, "email")))
            return JSONObject.success().response()
        }

        routes.post("/api/auth/verify-code", access: .open) { request, context in
            let fields = try RequestFields.decode(VerifyCode.self, from: request)
            let email = try EmailAddress(required(fields.email, "email"))
            let code = try required(fields.code, "code").trimmingCharacters(in: .whitespaces)
            let deviceID = fields.deviceID.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            if let deviceID, deviceID.count > maxDeviceID {
                throw APIError.invalid("device_id must be at most \(maxDeviceID) characters")
            }
            return try auth(context).verify(email: email, code: code, deviceID: deviceID).answer
        }

        routes.post("/api/auth/logout", access: .required, body: .none) { _, context in
            try auth(context).logout(context.requireCaller())
            return JSONObject.success().response()
        }

        routes.get("/api/me", access: .required) { _, context in
            let caller = try context.requireCaller()
            guard let me = try profiles(context).me(caller.userID) else { throw APIError.notFound("no such user") }
            var user = JSONObject()
            user.add("id", caller.userID)
            user.add("email", me.email)
            user.add("role", me.role)
            user.add("suspended", me.suspended)
            var answer = JSONObject.success()
            answer.add("user", user)
            answer.addRaw("profile", me.profile)
            return answer.response()
        }
    }
}

/// A field the route cannot do without: 422 naming it when absent or blank.
func required(_ value: String?, _ name: String) throws(APIError) -> String {
    guard let value, !value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
        throw APIError.invalid("\(name) is required")
    }
    return value
}
