import Postgres

// The services routes call for a caller: each does its database work through a pool made
// for the request (`PerRequest`). Services they hold are bound too when they reach the
// database by their own pool during the request; the others work on the connection they
// are given (`EventEffects`, `ImageStore.drop(_:on:)`, `Sessions.live`).

extension PostService: RequestBound {}
extension LikeService: RequestBound {}
extension CommentService: RequestBound {}
extension CommentLikeService: RequestBound {}
extension ProfileService: RequestBound {}
extension RelationService: RequestBound {}
extension NotificationService: RequestBound {}
extension FollowService: RequestBound {}
extension FeedService: RequestBound {}
extension SearchService: RequestBound {}
extension TagService: RequestBound {}
extension ChangeReader: RequestBound {}
extension Sessions: RequestBound {}
extension AccountExport: RequestBound {}
extension AccountDeletion: RequestBound {}
extension PushTokens: RequestBound {}
extension ReportService: RequestBound {}
extension ModerationService: RequestBound {}
extension UserLookup: RequestBound {}
extension UserRecord: RequestBound {}
extension ConsoleOverview: RequestBound {}
extension Identities: RequestBound {}
extension Tokens: RequestBound {}
extension ProviderSignIn: RequestBound {}


extension AuthService: RequestBound {
    /// Logging out revokes the token by `Tokens`' own pool: the caller's proof goes ahead of it.
    func serving(_ session: DatabaseSession) -> AuthService {
        var bound = self
        bound.pool = pool.serving(session)
        bound.tokens = tokens.serving(session)
        return bound
    }
}
