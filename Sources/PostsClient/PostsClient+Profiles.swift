/// Profiles (API.md "Auth and profiles").
extension PostsClient {
    public func profile(userID: Int) async throws -> Profile {
        try await send(APIRequest("GET", "/api/profiles/\(userID)"), as: ProfileEnvelope.self).profile
    }

    /// Changes the signed-in user's profile; only the fields set in `update` are sent.
    /// A username already taken (ignoring case) is `conflict`.
    @discardableResult
    public func updateProfile(_ update: ProfileUpdate) async throws -> Profile {
        try await send(APIRequest.json("PATCH", "/api/profiles/me", update.fields), as: ProfileEnvelope.self).profile
    }
}
