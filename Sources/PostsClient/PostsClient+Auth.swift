import Foundation

/// Email-code sign-in and profiles (API.md "Auth and profiles"): send a code, verify it
/// for a token, log out; read and change profiles.
extension PostsClient {
    /// Mails a six-digit code, valid 10 minutes. Answers alike whether or not the address
    /// is known; at most 5 codes per address an hour (`rateLimited` after).
    public func sendCode(to email: String) async throws {
        _ = try await send(APIRequest.json("POST", "/api/auth/send-code", [("email", .string(email))]),
                           as: SuccessEnvelope.self)
    }

    /// Exchanges a code for a token, which the client keeps and sends from now on. A code
    /// works once; a wrong one is `unauthorized`.
    /// - Parameter deviceID: names the device in the server's token list.
    @discardableResult
    public func verifyCode(_ code: String, email: String, deviceID: String? = nil) async throws -> SignIn {
        var fields: [(String, JSONValue)] = [("email", .string(email)), ("code", .string(code))]
        if let deviceID { fields.append(("device_id", .string(deviceID))) }
        let signIn = try await send(APIRequest.json("POST", "/api/auth/verify-code", fields), as: SignIn.self)
        token = signIn.token
        return signIn
    }

    /// Revokes the token on the server and forgets it here.
    public func logout() async throws {
        _ = try await send(APIRequest("POST", "/api/auth/logout"), as: SuccessEnvelope.self)
        token = nil
    }

    /// The signed-in account and its profile.
    public func me() async throws -> Me {
        try await send(APIRequest("GET", "/api/me"))
    }
}

extension PostsClient {
    public func profile(userID: Int) async throws -> Profile {
        try await send(APIRequest("GET", "/api/profiles/\(userID)"), as: ProfileEnvelope.self).profile
    }

    /// An account of another server of the fediverse by its `user@domain` (federation: found
    /// through its server's WebFinger when new here); `notFound` for none, `unavailable`
    /// while its server does not answer. Follow it by its `userID`.
    public func profile(acct: String) async throws -> Profile {
        let name = acct.hasPrefix("@") ? String(acct.dropFirst()) : acct
        let encoded = name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/", "?", "#"])) ?? name
        return try await send(APIRequest("GET", "/api/profiles/@\(encoded)"), as: ProfileEnvelope.self).profile
    }

    /// Changes the signed-in user's profile; only the fields set in `update` are sent.
    /// A username already taken (ignoring case) is `conflict`.
    @discardableResult
    public func updateProfile(_ update: ProfileUpdate) async throws -> Profile {
        try await send(APIRequest.json("PATCH", "/api/profiles/me", update.fields), as: ProfileEnvelope.self).profile
    }
}
