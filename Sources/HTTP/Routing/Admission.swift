/// A route's decision on a request from its head alone, before any of its body is read:
/// who is calling, whether they may (a token, a rate limit). It either throws (the error
/// is the answer, and a body not yet read is never read) or returns what it learnt, which
/// the handler finds in `RequestContext.admitted`. What the value is is the application's
/// business: the server only carries it.
///
/// Admission may block (a token lookup in a database), so it runs on a worker, never on an
/// event loop: on its own when the body is still to come (then the body is read only once
/// the request is admitted), or together with the handler when the whole request has
/// already arrived, as small JSON requests usually have (no extra hand-off for them). A
/// route that `runsOnEventLoop` runs its admission there too: give such a route only an
/// admission that never blocks.
public struct Admission: Sendable {
    /// What admission sees: the head and the client's address (behind a trusted proxy, the
    /// one its `X-Forwarded-For` names: see `RequestContext.remoteAddress`).
    public typealias Decide = @Sendable (_ head: RequestHead, _ remoteAddress: String) throws -> any Sendable

    private let decide: Decide

    public init(_ decide: @escaping Decide) {
        self.decide = decide
    }

    func admit(_ head: RequestHead, remoteAddress: String) throws -> any Sendable {
        try decide(head, remoteAddress)
    }
}
