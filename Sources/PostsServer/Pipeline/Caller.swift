/// Who a request acts for, as the identity stage resolved it.
public struct Caller: Sendable, Equatable {
    public let userID: Int64
    /// The bearer token the request came with; nil when trust mode named the user.
    public let tokenID: Int64?
    /// Who the caller blocked or was blocked by, and whom it muted (API.md "Safety"): read
    /// in the same query that resolved the caller, so that every read can leave them out
    /// without another round trip (see `Visibility`).
    public var relations = Relations()

    public init(userID: Int64, tokenID: Int64?, relations: Relations = Relations()) {
        self.userID = userID
        self.tokenID = tokenID
        self.relations = relations
    }
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
