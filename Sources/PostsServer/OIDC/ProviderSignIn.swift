import Crypto
import Foundation
import Postgres

/// Sign-in with a provider's ID token (API.md "Sign in with Apple, Google or any OpenID
/// Connect provider"): the identity (issuer, `sub`) names the user; a first sign-in joins
/// the account of the token's email only when the provider verified that email, else it
/// makes a new user. An unverified email is never an account's email: whoever wrote it
/// into a provider account could otherwise take the address's email-code account.
struct ProviderSignIn: Sendable {
    let pool: ConnectionPool
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
    func signIn(_ claims: IDToken.Claims, fullName: String?, deviceID: String?) throws -> AuthService.SignIn {
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
            } else {
                let verified = claims.emailVerified ? claims.email.flatMap { try? EmailAddress($0) } : nil
                let address = try verified ?? EmailAddress(Self.placeholderEmail(issuer: claims.issuer, subject: claims.subject))
                account = try accounts.findOrCreate(address, on: connection)
                email = address.value
                try connection.query("""
                    INSERT INTO identities (user_id, issuer, subject, email)
                    VALUES (\(account.userID), \(claims.issuer), \(claims.subject), \(claims.email))
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
}
