import Foundation
import HTTP
import Postgres

/// How a request names its caller, and the only place that knows: a bearer token; or, in
/// trust mode (development and integration tests), an email in the `X-User-Email` header
/// or the body's `email` field, whose user is created with a profile on first sight. In
/// token mode the email ways are ignored entirely.
struct Identity: Sendable {
    let tokens: Tokens
    let accounts: Accounts
    let trustsEmails: Bool
    /// The callers already looked up, each used with its proof (see `CallerCache`).
    let remembered = CallerCache()

    /// A caller, and when it was remembered rather than read, the condition that proves it
    /// is still current (checked with the request's first statement: `CallerProofStage`).
    struct Resolved: Sendable {
        let caller: Caller
        let proof: Precondition.Statement?
    }

    /// The caller the head names, nil when it names none; 401 for credentials that are
    /// present but not valid (a client should learn at once that its token is dead).
    func resolve(namedBy headers: HTTPHeaders) throws -> Resolved? {
        guard let key = Self.cacheKey(of: headers, trustsEmails: trustsEmails) else { return nil }
        if let entry = remembered.entry(key), let proof = entry.proof,
           entry.renewalDue.map({ tokens.clock.millisecondsSince1970 < $0 }) ?? true {
            return Resolved(caller: entry.caller, proof: proof)
        }
        guard let caller = try caller(namedBy: headers) else { return nil }
        return Resolved(caller: caller, proof: nil)
    }

    /// The caller the head names, read from the database (and remembered for the next
    /// request); nil when the head names none, 401 for credentials that are not valid.
    func caller(namedBy headers: HTTPHeaders) throws -> Caller? {
        guard let key = Self.cacheKey(of: headers, trustsEmails: trustsEmails) else { return nil }
        remembered.forget(key)
        var entry: CallerCache.Entry
        if let authorization = headers["Authorization"] {
            guard let token = Self.bearerToken(in: authorization) else {
                throw APIError.unauthenticated("use Authorization: Bearer <token>")
            }
            guard let found = try tokens.caller(presenting: token) else {
                throw APIError.unauthenticated("the token is not valid: it was revoked or never issued")
            }
            entry = found
        } else {
            guard let email = headers["X-User-Email"] else { return nil }
            entry = try caller(email: email)
        }
        entry.proof = entry.caller.tokenID == nil ? accounts.proof(of: entry) : tokens.proof(of: entry)
        remembered.remember(entry, as: key)
        return entry.caller
    }

    /// Checks a remembered caller's proof by itself: false when the caller is no longer current.
    func holds(_ proof: Precondition.Statement) throws -> Bool {
        do {
            try tokens.pool.withConnection { try $0.query(proof.statement) }
            return true
        } catch let error as PostgresError where error.sqlState == CallerCache.refuted {
            return false
        }
    }

    /// Trust mode: the caller the body's `email` field names, when the head named none.
    func caller(namedInBodyOf request: Request) throws -> Caller? {
        guard trustsEmails, let email = Self.emailField(of: request) else { return nil }
        return try caller(email: email).caller
    }

    private func caller(email: String) throws -> CallerCache.Entry {
        // The email is the credential here: one that is not an address is a bad credential.
        guard let address = try? EmailAddress(email) else {
            throw APIError.unauthenticated("X-User-Email (or the email field) is not an email address")
        }
        let account = try accounts.findOrCreate(address)
        // A token of a suspended user is revoked; trust mode's email is refused the same way.
        if account.suspended { throw Suspension.refusal }
        return CallerCache.Entry(caller: Caller(userID: account.userID, tokenID: nil, relations: account.relations),
                                 relationsVersion: account.relationsVersion, email: address.value)
    }

    /// What names the caller, as the cache knows it: the `Authorization` value, else in
    /// trust mode the `X-User-Email` value, each with a prefix of its own (an email is never
    /// taken for a token, nor the reverse).
    private static func cacheKey(of headers: HTTPHeaders, trustsEmails: Bool) -> String? {
        if let authorization = headers["Authorization"] { return "a " + authorization }
        guard trustsEmails, let email = headers["X-User-Email"] else { return nil }
        return "e " + email
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
