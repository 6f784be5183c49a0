import Foundation
import HTTP

/// `POST /api/auth/oidc` (a sign-in, or with a caller a link), `GET /api/me/identities`,
/// `DELETE /api/me/identities/<id>`.
enum OIDCRoutes {
    private struct SignInFields: Decodable {
        let provider: String?
        let idToken: String?
        let nonce: String?
        let deviceID: String?
        let fullName: String?

        enum CodingKeys: String, CodingKey {
            case provider, nonce
            case idToken = "id_token", deviceID = "device_id", fullName = "full_name"
        }
    }

    static func register(on routes: inout RouteTable, keys: [String: ProviderKeys], signIn: ProviderSignIn,
                         identities: Identities, clock: ServerClock) {
        let signIn = PerRequest(signIn)
        let identities = PerRequest(identities)
        // A caller (a bearer token) links the identity to their account: the way to add a
        // provider to an account whose email the provider may not join by.
        routes.post("/api/auth/oidc", access: .optional) { request, context in
            let fields = try RequestFields.decode(SignInFields.self, from: request)
            let name = try required(fields.provider, "provider")
            guard let store = keys[name] else {
                throw APIError.invalid("provider must be one of \(keys.keys.sorted().joined(separator: ", ")), not \(name)")
            }
            let text = try required(fields.idToken, "id_token")
            if let deviceID = fields.deviceID, deviceID.count > AuthRoutes.maxDeviceID {
                throw APIError.invalid("device_id must be at most \(AuthRoutes.maxDeviceID) characters")
            }
            // Counted after trimming, as a profile's full name is.
            let fullName = fields.fullName?.trimmingCharacters(in: .whitespacesAndNewlines)
            if let fullName, fullName.count > ProfilePatch.maxFullName {
                throw APIError.invalid("full_name must be at most \(ProfilePatch.maxFullName) characters")
            }
            let token: IDToken
            do {
                token = try IDToken(parsing: text)
            } catch {
                throw APIError.unauthenticated("\(error)")
            }
            guard case .keys(let signingKeys) = store.keys(for: token.header.keyID) else {
                throw APIError(.unavailable, "\(name)'s signing keys cannot be fetched right now; try again shortly", retryAfter: 5)
            }
            let verifier = IDTokenVerifier(issuer: store.provider.issuer, clientIDs: store.provider.clientIDs)
            let claims: IDToken.Claims
            do {
                claims = try verifier.verify(token, keys: signingKeys, now: clock.secondsSince1970, nonce: fields.nonce)
            } catch {
                throw APIError.unauthenticated("\(error)")
            }
            return try signIn(context).signIn(claims, from: store.provider, linkingTo: context.caller, fullName: fullName,
                                              deviceID: fields.deviceID).answer
        }

        routes.get("/api/me/identities", access: .required) { _, context in
            var answer = JSONObject.success()
            answer.add("identities", try identities(context).list(of: context.requireCaller()))
            return answer.response()
        }

        routes.delete("/api/me/identities/:id", access: .required) { _, context in
            let id = try context.parameters.require("id", as: Int64.self)
            switch try identities(context).unlink(id, of: context.requireCaller()) {
            case .removed: return JSONObject.success().response()
            case .notFound: throw APIError.notFound("no such identity")
            case .lastWayIn: throw APIError.conflict("this identity is the account's last way in: link another first")
            }
        }
    }
}
