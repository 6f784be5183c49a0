import HTTP

/// The posts routes of API.md, firefly's among them: HTTP in and out, SQL in `PostService`.
enum PostRoutes {
    /// `clock`: the day an `Idempotency-Key` is remembered for.
    static func register(on routes: inout RouteTable, posts: PostService, uploadDirectory: String,
                         blockedWords: BlockedWords, clock: ServerClock) {
        let posts = PerRequest(posts)
        let body = postBody(uploadDirectory: uploadDirectory)

        routes.get("/api/posts", etag: true) { request, context in
            let parent = try parentFilter(request.query["parent_id"])
            let author = try request.query["user_id"].map { text throws(APIError) in try queryID(text, "user_id") }
            return pageAnswer(try posts(context).page(parent: parent, author: author, PageRequest<KeysetCursor>(request.query), caller: context.caller))
        }

        routes.get("/api/posts/recent", etag: true) { request, context in
            pageAnswer(try posts(context).page(PageRequest<KeysetCursor>(request.query), caller: context.caller))
        }

        routes.get("/api/posts/:id", etag: true) { _, context in
            let id = try context.parameters.require("id", as: Int64.self)
            guard let post = try posts(context).post(id, caller: context.caller) else { throw APIError.notFound("no such post") }
            return postAnswer(post)
        }

        routes.get("/api/posts/:id/children", etag: true) { request, context in
            let id = try context.parameters.require("id", as: Int64.self)
            return try PostPageAnswer.make(id, posts(context).children(of: id, PageRequest<KeysetCursor>(request.query), caller: context.caller),
                                           nextCursor: { $0.nextCursor?.text }) { page, answer in
                answer.addRaw("children", page.json)
                answer.add("count", page.count)
            }
        }

        routes.get("/api/posts/:id/ancestors", etag: true) { _, context in
            let id = try context.parameters.require("id", as: Int64.self)
            guard let ancestors = try posts(context).ancestors(of: id, caller: context.caller) else {
                throw APIError.notFound("no such post")
            }
            var answer = JSONObject.success()
            answer.add("post_id", id)
            answer.addRaw("ancestors", ancestors)
            return answer.response()
        }

        // `POST /api/posts` (JSON or multipart) and firefly's form: the same create.
        for path in ["/api/posts", "/api/posts/create"] {
            routes.post(path, access: .required, body: body) { request, context in
                let caller = try context.requireCaller()
                let fields = try BodyFields(request)
                let draft = try PostDraft(fields, image: try image(of: request, context))
                try blockedWords.check(draft.title, draft.summary, draft.body)
                let idempotency = try IdempotentRequest(request, caller: caller, fields: fields, clock: clock)
                return try posts(context).create(draft, by: caller, idempotency: idempotency).response(as: "post")
            }
        }

        routes.patch("/api/posts/:id", access: .required, body: body) { request, context in
            let id = try context.parameters.require("id", as: Int64.self)
            let edits = try PostEdits(BodyFields(request), image: try image(of: request, context))
            try blockedWords.check(edits.title, edits.summary, edits.body)
            return postAnswer(try posts(context).update(id, with: edits, by: context.requireCaller()))
        }

        // Firefly's form variant of the PATCH: the post's id in a `post_id` field.
        routes.post("/api/posts/update", access: .required, body: body) { request, context in
            let fields = try BodyFields(request)
            guard let id = try PostText.postID(fields, "post_id") else {
                throw APIError.invalid("post_id is required")
            }
            let edits = try PostEdits(fields, image: try image(of: request, context))
            try blockedWords.check(edits.title, edits.summary, edits.body)
            return postAnswer(try posts(context).update(id, with: edits, by: context.requireCaller()))
        }

        routes.delete("/api/posts/:id", access: .required) { _, context in
            let id = try context.parameters.require("id", as: Int64.self)
            try posts(context).delete(id, by: context.requireCaller())
            return JSONObject.success().response()
        }

        routes.post("/api/posts/reparent", access: .required) { request, context in
            let fields = try BodyFields(request)
            guard let id = try PostText.postID(fields, "post_id") else {
                throw APIError.invalid("post_id is required")
            }
            guard fields.contains("parent_id") else {
                throw APIError.invalid("parent_id is required (null moves the post to the root)")
            }
            let parent = try PostText.postID(fields, "parent_id")
            return postAnswer(try posts(context).reparent(id, under: parent, by: context.requireCaller()))
        }
    }

    /// JSON (up to 1 MiB) or a multipart form whose files must be images (up to 11 MiB,
    /// streamed to the upload folder). Every route with this body requires a caller, which
    /// the pipeline resolves from the head before a byte of the body is read (a refused
    /// upload costs no disk).
    private static func postBody(uploadDirectory: String) -> BodyPolicy {
        let images = MultipartBodyConsumer.Policy.images(in: uploadDirectory)
        return BodyPolicy { head throws(HTTPError) -> (any BodyConsumer)? in
            let type = head.headers["Content-Type"]?.lowercased() ?? ""
            if type.hasPrefix("multipart/") {
                return try MultipartBodyConsumer(head: head, policy: images)
            }
            return CollectingBodyConsumer(limit: Configuration.UploadLimits.api.maxJSONBytes)
        }
    }

    /// The `image` file part, if the form has one. Making it again (the image pipeline) is
    /// long CPU work: the request moves to the heavy lane first.
    private static func image(of request: Request, _ context: AppContext) throws -> UploadedFile? {
        guard let file = request.form?.file(named: "image") else { return nil }
        try context.http.requireHeavyLane()
        return file
    }

    private static func parentFilter(_ text: String?) throws(APIError) -> PostService.ParentFilter {
        guard let text else { return .any }
        if text == "root" { return .root }
        return .post(try queryID(text, "parent_id"))
    }

    private static func queryID(_ text: String, _ name: String) throws(APIError) -> Int64 {
        guard let id = Int64(pathParameter: text) else { throw .malformed("\(name) must be a post or user id") }
        return id
    }

    private static func pageAnswer(_ page: PostService.Page) -> Response {
        var answer = JSONObject.success()
        answer.addRaw("posts", page.json)
        answer.add("next_cursor", page.nextCursor?.text)
        return answer.response()
    }

    private static func postAnswer(_ post: [UInt8]) -> Response {
        var answer = JSONObject.success()
        answer.addRaw("post", post)
        return answer.response()
    }
}
