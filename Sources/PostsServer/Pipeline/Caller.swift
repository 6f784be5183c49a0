/// Who a request acts for, as the identity stage resolved it.
public struct Caller: Sendable, Equatable {
    public let userID: Int64
    /// The bearer token the request came with; nil when trust mode named the user.
    public let tokenID: Int64?
}

/// What a route needs to know about its caller.
enum Access: Sendable {
    /// No identity at all (ping, sign-in routes): nothing is resolved.
    case open
    /// A caller if the request names one (`liked_by_me` on public pages).
    case optional
    /// A caller, or 401.
    case required
}
