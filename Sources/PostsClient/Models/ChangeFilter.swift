/// Which changes `changes(since:filter:)` and `events(filter:)` deliver; the parts combine
/// (API.md: `post_id`, `parent_id`, `parent_id=root`, `user_id`).
public struct ChangeFilter: Sendable, Equatable, Hashable {
    public enum Parent: Sendable, Equatable, Hashable {
        case post(Int)
        /// Root posts, and a root moved under another post.
        case root
    }

    /// The post itself, its direct children, and the likes and comments of both.
    public var postID: Int?
    /// Direct children of a post (one reparented away included), or root posts.
    public var parent: Parent?
    /// Changes made by this user.
    public var userID: Int?

    public init(postID: Int? = nil, parent: Parent? = nil, userID: Int? = nil) {
        self.postID = postID
        self.parent = parent
        self.userID = userID
    }

    /// Every change.
    public static let all = ChangeFilter()

    public static func post(_ id: Int) -> ChangeFilter { ChangeFilter(postID: id) }
    public static func children(of id: Int) -> ChangeFilter { ChangeFilter(parent: .post(id)) }
    public static let rootPosts = ChangeFilter(parent: .root)
    public static func user(_ id: Int) -> ChangeFilter { ChangeFilter(userID: id) }

    var queryItems: [(String, String)] {
        var items: [(String, String)] = []
        if let postID { items.append(("post_id", String(postID))) }
        switch parent {
        case .post(let id)?: items.append(("parent_id", String(id)))
        case .root?: items.append(("parent_id", "root"))
        case nil: break
        }
        if let userID { items.append(("user_id", String(userID))) }
        return items
    }
}
