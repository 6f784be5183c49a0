import Crypto
import Foundation
import Postgres

/// Sign-in with a provider's ID token (API.md "Sign in with Apple, Google or any OpenID
/// Connect provider"): the identity (issuer, `sub`) names the user; a first sign-in joins
/// the account of the token's email only when the provider verified that email and is
/// trusted to (`OIDCProvider.linksByEmail`), else it makes a new user. An email not so
/// vouched for is never an account's email: whoever wrote it into a provider account
/// could otherwise take the address's email-code account, or have its owner's email-code
/// sign-in land in theirs. A signed-in caller links the identity to their own account.
struct ProviderSignIn: Sendable {
    var pool: ConnectionPool
    let accounts: Accounts
    let tokens: Tokens

    /// The email of an account made from a token without a verified email: an address no
    /// code can be sent to (RFC 2606's `.invalid`), unique per identity. Such an account's
    /// only ways in are its identities.
    static func placeholderEmail(issuer: String, subject: String) -> String {
        let digest = SHA256.hash(data: Array("\(issuer)\n\(subject)".utf8)).prefix(12).map { String(format: "%02x", $0) }.joined()
        return "oidc-\(digest)@identities.invalid"
    }

    static func hasEmailWayIn(_ email: String) -> Bool { !email.hasSuffix("@identities.invalid") }

    /// `fullName`: trimmed and of its length (the route checks); names a new user only.
    /// `caller`: who signs in with the provider while signed in; the identity is linked to
    /// their account (409 if it is another's), as Mastodon links a signed-in user's.
    func signIn(_ claims: IDToken.Claims, from provider: OIDCProvider, linkingTo caller: Caller?, fullName: String?,
                deviceID: String?) throws -> AuthService.SignIn {
        try pool.withTransaction { connection in
            // First sign-ins of one identity at once (a double tap, a retry) take turns: the
            // second finds the identity the first made instead of failing on its key.
            try connection.query("""
                SELECT pg_advisory_xact_lock(hashtextextended(\("identity:\(claims.issuer)\n\(claims.subject)"), 0))
                """)
            let account: Accounts.Account
            let email: String
            if let row = try connection.query("""
                SELECT u.id, u.email FROM identities i JOIN users u ON u.id = i.user_id
                WHERE i.issuer = \(claims.issuer) AND i.subject = \(claims.subject)
                """).first {
                account = Accounts.Account(userID: try row.decode("id"), isNew: false)
                email = try row.decode("email")
                if let caller, caller.userID != account.userID {
                    throw APIError.conflict("this \(provider.name) account signs in to another user: unlink it there first")
                }
            } else {
                if let caller {
                    account = Accounts.Account(userID: caller.userID, isNew: false)
                    email = try connection.query("SELECT email FROM users WHERE id = \(caller.userID)").firstRow().decode("email")
                } else {
                    let address = try accountEmail(claims, from: provider, on: connection)
                    account = try accounts.findOrCreate(address, on: connection)
                    email = address.value
                }
                try connection.query("""
                    INSERT INTO identities (user_id, issuer, subject, email, created_at)
                    VALUES (\(account.userID), \(claims.issuer), \(claims.subject), \(claims.email), \(accounts.clock.now))
                    """)
                if account.isNew, let fullName, !fullName.isEmpty {
                    // The word filter, as for any full name: 422, and the new account is not made.
                    // (A returning user's name is not used, so not checked: an app that sends
                    // it again does not lock them out.)
                    try accounts.blockedWords.check(fullName)
                    try connection.query("UPDATE profiles SET full_name = \(fullName) WHERE user_id = \(account.userID)")
                }
            }
            if !account.isNew, try Suspension.isSuspended(account.userID, on: connection) { throw Suspension.refusal }
            let token = try tokens.issue(userID: account.userID, deviceID: deviceID, on: connection)
            return AuthService.SignIn(userID: account.userID, email: try EmailAddress(email), isNewUser: account.isNew, token: token)
        }
    }

    /// The email a first sign-in's account is found or made by: the token's when its
    /// provider verified it and is trusted to, else a placeholder of the identity's own.
    ///
    /// An untrusted provider's verified email that is an account's already is refused (409:
    /// sign in as before, then with the provider to link it) rather than given a second
    /// account beside it. Mastodon since 4.2.6 (GHSA-vm39-j3vx-pch3) no longer attaches a
    /// provider identity to an existing user by email and sends the sign-in back to log
    /// in; GitHub asks the owner of a matching account to sign in to it and connect the
    /// provider from there. A second account would split the person in two and hold the
    /// identity, so that the link they want would then be refused. The 409 says an account
    /// exists only to whom the provider vouches the address belongs.
    private func accountEmail(_ claims: IDToken.Claims, from provider: OIDCProvider,
                              on connection: PostgresConnection) throws -> EmailAddress {
        let placeholder = try EmailAddress(Self.placeholderEmail(issuer: claims.issuer, subject: claims.subject))
        // (A placeholder is never taken from a token: it would join that identity's account.)
        guard claims.emailVerified, let verified = claims.email.flatMap({ try? EmailAddress($0) }),
              Self.hasEmailWayIn(verified.value) else { return placeholder }
        if provider.linksByEmail { return verified }
        if try connection.query("SELECT 1 FROM users WHERE email = \(verified.value)").first != nil {
            throw APIError.conflict("""
                this email belongs to an account already: sign in to it as before, then sign in with \(provider.name) \
                while signed in to link it
                """)
        }
        return placeholder
    }
}
