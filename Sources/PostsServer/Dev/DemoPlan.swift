/// What a demo seed will write, decided before any SQL runs: users, a tree of posts, and
/// who likes and comments on what. Indices stand for rows not yet written (an author is an
/// index into the author list, a parent an earlier post), so the plan is pure and the
/// writer only maps it onto ids.
struct DemoPlan: Sendable, Equatable {
    struct User: Sendable, Equatable {
        let username: String
        let fullName: String
    }

    struct Post: Sendable, Equatable {
        /// An earlier post of the plan; nil for a root.
        let parent: Int?
        /// Which child of its parent it is (1 for the first): the parent's `child_count`
        /// right after it. Nil for a root.
        let siblingRank: Int?
        let author: Int
        let title: String
        let summary: String
        let body: String
        let locationTag: String?
    }

    struct Like: Sendable, Equatable {
        let post: Int
        let user: Int
        /// Which like of its post it is (1 for the first): the post's `like_count` after it.
        let rank: Int
    }

    struct Comment: Sendable, Equatable {
        let post: Int
        let author: Int
        let body: String
        /// Which comment of its post it is: the post's `comment_count` after it.
        let rank: Int
        /// An earlier top-level comment of the same post this one replies to; nil for a
        /// top-level comment.
        var replyTo: Int? = nil
    }

    struct CommentLike: Sendable, Equatable {
        let comment: Int
        let user: Int
        /// Which like of its comment it is: the comment's `like_count` after it.
        let rank: Int
    }

    let users: [User]
    let posts: [Post]
    let likes: [Like]
    let comments: [Comment]
    let commentLikes: [CommentLike]

    static let maxLikesPerPost = 6
    static let maxCommentsPerPost = 3
    static let maxLikesPerComment = 2

    /// `users` new users; `posts` posts written by `authors` people (the new users, or
    /// those already there when none are asked for). `batch` keeps usernames unique across
    /// seeds: a short random tag.
    init<Random: RandomNumberGenerator>(users userCount: Int, posts postCount: Int, authors authorCount: Int,
                                        batch: String, using random: inout Random) {
        precondition(postCount == 0 || authorCount > 0, "posts need authors")
        users = (0..<userCount).map { index in
            let first = DemoText.firstNames[index % DemoText.firstNames.count]
            let last = DemoText.lastNames[(index / DemoText.firstNames.count) % DemoText.lastNames.count]
            return User(username: "\(first.lowercased())_\(batch)\(index + 1)", fullName: "\(first) \(last)")
        }
        // About one post in six starts a thread; the rest answer an earlier post, so the
        // tree has both breadth and depth.
        let rootCount = postCount == 0 ? 0 : max(1, postCount / 6)
        var childCounts = [Int](repeating: 0, count: postCount)
        posts = (0..<postCount).map { index in
            let parent = index < rootCount ? nil : Int.random(in: 0..<index, using: &random)
            if let parent { childCounts[parent] += 1 }
            let topicIndex = Int.random(in: 0..<DemoText.topics.count, using: &random)
            let topic = DemoText.topics[topicIndex]
            return Post(parent: parent, siblingRank: parent.map { childCounts[$0] },
                        author: Int.random(in: 0..<authorCount, using: &random),
                        title: parent == nil ? "Thoughts on \(topic)" : "Re: \(topic)",
                        summary: DemoText.summaries.randomElement(using: &random)!,
                        body: DemoText.bodies.randomElement(using: &random)! + " #\(DemoText.topicTags[topicIndex])",
                        locationTag: Bool.random(using: &random) ? DemoText.places.randomElement(using: &random) : nil)
        }
        var likes: [Like] = []
        var comments: [Comment] = []
        for post in 0..<postCount {
            let likers = Int.random(in: 0...min(authorCount, Self.maxLikesPerPost), using: &random)
            var likedBy = Set<Int>()
            while likedBy.count < likers { likedBy.insert(Int.random(in: 0..<authorCount, using: &random)) }
            likes += likedBy.sorted().enumerated().map { Like(post: post, user: $1, rank: $0 + 1) }
            let commentCount = Int.random(in: 0...Self.maxCommentsPerPost, using: &random)
            var topLevel: [Int] = []
            for rank in stride(from: 1, through: commentCount, by: 1) {
                // After the first, about one comment in two answers an earlier top-level one.
                let replyTo = topLevel.isEmpty || Bool.random(using: &random) ? nil : topLevel.randomElement(using: &random)
                if replyTo == nil { topLevel.append(comments.count) }
                comments.append(Comment(post: post, author: Int.random(in: 0..<authorCount, using: &random),
                                        body: DemoText.comments.randomElement(using: &random)!, rank: rank, replyTo: replyTo))
            }
        }
        var commentLikes: [CommentLike] = []
        for comment in comments.indices {
            let likers = Int.random(in: 0...min(authorCount, Self.maxLikesPerComment), using: &random)
            var likedBy = Set<Int>()
            while likedBy.count < likers { likedBy.insert(Int.random(in: 0..<authorCount, using: &random)) }
            commentLikes += likedBy.sorted().enumerated().map { CommentLike(comment: comment, user: $1, rank: $0 + 1) }
        }
        self.likes = likes
        self.comments = comments
        self.commentLikes = commentLikes
    }
}
