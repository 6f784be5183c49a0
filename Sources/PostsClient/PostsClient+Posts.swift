import Foundation

/// Posts and their tree (API.md "Posts"). Listings are `PageSequence`s: iterate them and
/// the pages are fetched as the loop needs them.
extension PostsClient {
    /// Which posts `posts(parent:author:pageSize:)` lists.
    public enum ParentFilter: Sendable, Equatable {
        case any
        case root
        case post(Int)
    }

    /// Posts, newest first: all of them, root posts, or the children of one; optionally
    /// by one author.
    public func posts(parent: ParentFilter = .any, author userID: Int? = nil, pageSize: Int = 50) -> PageSequence<Post> {
        var query: [(String, String)] = []
        switch parent {
        case .any: break
        case .root: query.append(("parent_id", "root"))
        case .post(let id): query.append(("parent_id", String(id)))
        }
        if let userID { query.append(("user_id", String(userID))) }
        return pages(of: PostsPageEnvelope.self, "/api/posts", query: query, pageSize: pageSize) {
            Page(items: $0.posts, nextCursor: $0.nextCursor)
        }
    }

    /// The newest posts of any depth (firefly's feed).
    public func recentPosts(pageSize: Int = 50) -> PageSequence<Post> {
        pages(of: PostsPageEnvelope.self, "/api/posts/recent", pageSize: pageSize) {
            Page(items: $0.posts, nextCursor: $0.nextCursor)
        }
    }

    public func post(id: Int) async throws -> Post {
        try await send(APIRequest("GET", "/api/posts/\(id)"), as: PostEnvelope.self).post
    }

    /// A post's direct children, newest first; `notFound` (on the first page) when the
    /// post does not exist.
    public func children(of postID: Int, pageSize: Int = 50) -> PageSequence<Post> {
        pages(of: ChildrenEnvelope.self, "/api/posts/\(postID)/children", pageSize: pageSize) {
            Page(items: $0.children, nextCursor: $0.nextCursor)
        }
    }

    /// The posts above this one, root first, the post itself excluded: breadcrumbs.
    public func ancestors(of postID: Int) async throws -> [Post] {
        try await send(APIRequest("GET", "/api/posts/\(postID)/ancestors"), as: AncestorsEnvelope.self).ancestors
    }

    /// Creates a post, with an image if given (then sent as a multipart form). Carries an
    /// `Idempotency-Key` made for this call, so that a retry after a lost answer returns
    /// the same post instead of a second one.
    public func createPost(_ post: NewPost, image: ImageUpload? = nil) async throws -> Post {
        let request = try Self.body("POST", "/api/posts", fields: post.fields, image: image).idempotent()
        return try await send(request, as: PostEnvelope.self).post
    }

    /// Changes the fields set in `edits`, and the image if one is given (owner only:
    /// `forbidden` otherwise).
    public func updatePost(id: Int, _ edits: PostEdits, image: ImageUpload? = nil) async throws -> Post {
        try await send(try Self.body("PATCH", "/api/posts/\(id)", fields: edits.fields, image: image),
                       as: PostEnvelope.self).post
    }

    /// Deletes the post with its whole subtree, likes and comments (owner only).
    public func deletePost(id: Int) async throws {
        _ = try await send(APIRequest("DELETE", "/api/posts/\(id)"), as: SuccessEnvelope.self)
    }

    /// Moves a post under another one, or to the root with nil. Under itself or one of its
    /// descendants is `conflict`.
    public func movePost(id: Int, toParent parentID: Int?) async throws -> Post {
        let request = try APIRequest.json("POST", "/api/posts/reparent",
                                          [("post_id", .int(id)), ("parent_id", parentID.map(JSONValue.int) ?? .null)])
        return try await send(request, as: PostEnvelope.self).post
    }

    /// JSON without an image; a multipart form of the same fields with one.
    static func body(_ method: String, _ path: String, fields: [(String, JSONValue)], image: ImageUpload?) throws -> APIRequest {
        guard let image else { return try APIRequest.json(method, path, fields) }
        var form = MultipartForm()
        for (name, value) in fields { form.append(value.formText, named: name) }
        form.append(image.data, named: "image", filename: image.filename, contentType: image.contentType)
        return APIRequest(method, path, body: .multipart(form))
    }
}
