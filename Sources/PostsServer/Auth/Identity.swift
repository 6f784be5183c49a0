import Foundation
import HTTP

/// How a request names its caller, and the only place that knows: a bearer token; or, in
/// trust mode (development and integration tests), an email in the `X-User-Email` header
/// or the body's `email` field, whose user is created with a profile on first sight. In
/// token mode the email ways are ignored entirely.
struct Identity: Sendable {
    let tokens: Tokens
    let accounts: Accounts
    let trustsEmails: Bool

    /// The caller the head names, nil when it names none; 401 for credentials that are
    /// present but not valid (a client should learn at once that its token is dead).
    func caller(namedBy headers: HTTPHeaders) throws -> Caller? {
        if let authorization = headers["Authorization"] {
            guard let token = Self.bearerToken(in: authorization) else {
                throw APIError.unauthenticated("use Authorization: Bearer <token>")
            }
            guard let caller = try tokens.caller(presenting: token) else {
                throw APIError.unauthenticated("the token is not valid: it was revoked or never issued")
            }
            return caller
        }
        guard trustsEmails, let email = headers["X-User-Email"] else { return nil }
        return try caller(email: email)
    }

    /// Trust mode: the caller the body's `email` field names, when the head named none.
    func caller(namedInBodyOf request: Request) throws -> Caller? {
        guard trustsEmails, let email = Self.emailField(of: request) else { return nil }
        return try caller(email: email)
    }

    private func caller(email: String) throws -> Caller {
        // The email is the credential here: one that is not an address is a bad credential.
        guard let address = try? EmailAddress(email) else {
            throw APIError.unauthenticated("X-User-Email (or the email field) is not an email address")
        }
        let account = try accounts.findOrCreate(address)
        // A token of a suspended user is revoked; trust mode's email is refused the same way.
        if account.suspended { throw Suspension.refusal }
        return Caller(userID: account.userID, tokenID: nil, relations: account.relations)
    }

    static func bearerToken(in authorization: String) -> String? {
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }

    private struct EmailField: Decodable {
        let email: String?
    }

    /// The body's `email` field, if the body has one; a body that does not parse is the
    /// route's to refuse, not this.
    private static func emailField(of request: Request) -> String? {
        if let form = request.form { return form[field: "email"] }
        guard !request.body.isEmpty else { return nil }
        return (try? RequestFields.decode(EmailField.self, from: request))?.email
    }
}
