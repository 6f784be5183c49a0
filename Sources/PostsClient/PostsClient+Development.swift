/// The development affordances (API.md), served only by a server in `trust` mode
/// (`posts-server dev`): an app's UI tests sign in without a mail server and start each
/// run from a clean slate. Elsewhere they are `notFound`.
extension PostsClient {
    /// What the outbox holds for an address, newest first; `loginCode` reads the code.
    public func developmentMailbox(for email: String) async throws -> [MailboxMessage] {
        try await send(APIRequest("GET", "/api/dev/mailbox", query: [("email", email)]), as: MailboxEnvelope.self).messages
    }

    /// Signs in through the whole email-code flow, reading the code from the mailbox.
    @discardableResult
    public func developmentSignIn(email: String) async throws -> SignIn {
        try await sendCode(to: email)
        guard let code = try await developmentMailbox(for: email).first?.loginCode else {
            throw PostsAPIError(status: 404, code: .notFound, message: "no sign-in code in the mailbox of \(email)")
        }
        return try await verifyCode(code, email: email)
    }

    /// Empties every table and the uploads folder.
    public func developmentReset() async throws {
        _ = try await send(APIRequest("POST", "/api/dev/reset"), as: SuccessEnvelope.self)
    }

    /// Adds demo users and a tree of posts with likes and comments (users 0...1000,
    /// posts 0...10000; the server's defaults when nil). With no users asked for, the
    /// posts are written by people already there.
    @discardableResult
    public func developmentSeed(users: Int? = nil, posts: Int? = nil) async throws -> SeedCounts {
        var fields: [(String, JSONValue)] = []
        if let users { fields.append(("users", .int(users))) }
        if let posts { fields.append(("posts", .int(posts))) }
        return try await send(.json("POST", "/api/dev/seed", fields), as: SeedCounts.self)
    }
}
