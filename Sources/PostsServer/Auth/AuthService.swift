import HTTP
import Logging
import Postgres

/// Email-code sign-in: send a code, trade it for a token, give the token back. The answers
/// never tell whether an address has an account.
struct AuthService: Sendable {
    var pool: ConnectionPool
    let accounts: Accounts
    var tokens: Tokens
    /// Codes live and count by the tokens' clock.
    var codes: LoginCodes { LoginCodes(clock: tokens.clock) }
    let outbox: Outbox
    /// `posts-server dev` also logs each code, so a developer needs no mailer.
    let logsCodes: Bool
    let logger: Logger

    func sendCode(to email: EmailAddress) throws {
        let code = LoginCodes.generate()
        let wait = try pool.withTransaction { connection -> Int? in
            guard let wait = try codes.store(code, for: email, on: connection) else {
                try outbox.enqueue(to: email.value, subject: "Your sign-in code: \(code)", body: """
                    Your sign-in code is \(code). It works once, for \(LoginCodes.lifetimeMinutes) minutes.
                    If you did not ask for it, ignore this message.
                    """, on: connection)
                return nil
            }
            return wait
        }
        if let wait {
            throw APIError(.tooManyRequests, "at most \(LoginCodes.maxPerHour) codes per address an hour", retryAfter: wait)
        }
        if logsCodes { logger.info("sign-in code", metadata: ["email": "\(email)", "code": "\(code)"]) }
    }

    struct SignIn: Sendable {
        let userID: Int64
        let email: EmailAddress
        let isNewUser: Bool
        let token: String

        /// `verify-code`'s answer, which a provider's sign-in gives too.
        var answer: Response {
            var answer = JSONObject.success()
            answer.add("user_id", userID)
            answer.add("email", email.value)
            answer.add("is_new_user", isNewUser)
            answer.add("token", token)
            return answer.response()
        }
    }

    /// A token for the code's address, creating the user on first sign-in; 401 for a wrong,
    /// used, expired or dead code (the attempt is counted all the same).
    func verify(email: EmailAddress, code: String, deviceID: String?) throws -> SignIn {
        let signIn = try pool.withTransaction { connection -> SignIn? in
            guard try codes.check(code, for: email, on: connection) == .accepted else { return nil }
            let account = try accounts.findOrCreate(email, on: connection)
            // API.md: send-code answered 200 (it leaks nothing); the code itself says no.
            if !account.isNew, try Suspension.isSuspended(account.userID, on: connection) { throw Suspension.refusal }
            let token = try tokens.issue(userID: account.userID, deviceID: deviceID, on: connection)
            return SignIn(userID: account.userID, email: email, isNewUser: account.isNew, token: token)
        }
        guard let signIn else { throw APIError.unauthenticated("wrong or expired code") }
        return signIn
    }

    func logout(_ caller: Caller) throws {
        // Trust mode names a user without a token: then there is nothing to revoke.
        if let tokenID = caller.tokenID { try tokens.revoke(tokenID: tokenID) }
    }
}
