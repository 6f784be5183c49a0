/// The 403 refusals an app shows differently. API.md gives them all the one code
/// `forbidden`, so they are told apart by the server's message; anything else stays nil.
extension PostsAPIError {
    public enum Refusal: Sendable, Hashable {
        /// Liking, commenting on, replying under or moving a post under the content of a
        /// user on the other side of a block (whichever of the two blocked the other).
        case blocked
        /// Signing in (`verifyCode`) to a suspended account. A session the account already
        /// had ends with `unauthorized` instead: suspension revokes its tokens.
        case accountSuspended
        /// A moderation call by an account that is neither a moderator nor an admin.
        case moderatorsOnly
    }

    /// Which of the refusals above this error is; nil for any other error.
    public var refusal: Refusal? {
        guard status == 403, code == .forbidden else { return nil }
        let text = message.lowercased()
        // API.md quotes the suspension's message; the other two are the server's wording.
        if text == "this account is suspended" { return .accountSuspended }
        if text.contains("blocked") { return .blocked }
        if text.contains("moderators only") { return .moderatorsOnly }
        return nil
    }
}
