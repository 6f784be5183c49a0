/// The `Read-After` token a client keeps (API.md "Many databases"): the latest of those its
/// answers brought. Answers to requests sent at once may come back in any order, and an
/// earlier token would let a read miss the later write, so of two log positions (`hex/hex`)
/// the higher is kept. A token that is no position (the server's `primary`: it could not
/// measure where a write ended) is newer than any kept before it, and only an answer to a
/// request sent after it arrived replaces it: one sent before may name a position from
/// before that write.
struct ReadAfterToken: Sendable {
    private(set) var token: String?
    /// Tokens kept so far; a request notes the count when it is sent.
    private(set) var generation = 0
    /// The generation at which a token that is no position was kept.
    private var unmeasuredSince: Int?

    init(_ token: String? = nil) {
        if let token { keep(token) }
    }

    /// Keeps `new`, the token of an answer to a request sent at `sentAt` (a generation),
    /// unless the kept one is later.
    mutating func keepLater(_ new: String, sentAt: Int) {
        if let kept = token {
            switch (Self.position(kept), Self.position(new)) {
            case (let old?, let later?) where later < old: return
            case (nil, _) where sentAt < (unmeasuredSince ?? 0): return
            default: break
            }
        }
        keep(new)
    }

    /// Replaces the token outright (a client's owner handing one over).
    mutating func set(_ new: String?) {
        if let new { keep(new) } else { token = nil; unmeasuredSince = nil }
    }

    private mutating func keep(_ new: String) {
        token = new
        generation += 1
        unmeasuredSince = Self.position(new) == nil ? generation : nil
    }

    private static func position(_ token: String) -> UInt64? {
        let halves = token.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, halves.allSatisfy({ (1...8).contains($0.count) }),
              let high = UInt64(halves[0], radix: 16), let low = UInt64(halves[1], radix: 16) else { return nil }
        return high << 32 | low
    }
}
