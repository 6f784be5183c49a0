import HTTP

/// API.md "Search and hashtags": `GET /api/search`, a tag, its posts and the trending tags.
/// Open to anyone; a signed-in caller's blocks and mutes apply (`Visibility.Surface.search`).
enum SearchRoutes {
    static func register(on routes: inout RouteTable, search: SearchService, tags: TagService) {
        let search = PerRequest(search)
        let tags = PerRequest(tags)
        routes.get("/api/search", etag: true) { request, context in
            let text = try SearchService.validQuery(request.query["q"])
            let page = try PageRequest<NoCursor>(request.query)
            let cursor = request.query["cursor"]
            // Read whatever the type: people and tags have one order of their own, but a
            // sort no type knows is a malformed request all the same (API.md).
            let sort = try sortOrder(request.query["sort"])
            var answer = JSONObject.success()
            switch request.query["type"] ?? "posts" {
            case "posts":
                let found = try search(context).posts(text, sort: sort, limit: page.limit, cursor: cursor, caller: context.caller)
                answer.addRaw("posts", found.json)
                answer.add("next_cursor", found.nextCursor)
            case "people":
                let found = try search(context).people(text, limit: page.limit, cursor: cursor, caller: context.caller)
                answer.addRaw("profiles", found.json)
                answer.add("next_cursor", found.nextCursor)
            case "tags":
                let found = try search(context).tags(text, limit: page.limit, cursor: cursor)
                answer.addRaw("tags", found.json)
                answer.add("next_cursor", found.nextCursor)
            default:
                throw APIError.malformed("type must be posts, people or tags")
            }
            return answer.response()
        }

        routes.get("/api/tags/trending", etag: true) { request, context in
            let limit = try PageRequest<NoCursor>(request.query, maxLimit: TagService.maxListed, defaultLimit: 10).limit
            var list: [UInt8] = [UInt8(ascii: "[")]
            for (index, tag) in try tags(context).trending(limit: limit).enumerated() {
                if index > 0 { list.append(UInt8(ascii: ",")) }
                TagShape.append(tag, to: &list)
            }
            list.append(UInt8(ascii: "]"))
            var answer = JSONObject.success()
            answer.addRaw("tags", list)
            return answer.response()
        }

        routes.get("/api/tags/:name", etag: true) { _, context in
            let name = try context.parameters.require("name", as: String.self)
            guard let tag = try tags(context).tag(name) else { throw APIError.notFound("no such tag") }
            var answer = JSONObject.success()
            answer.addRaw("tag", tag)
            return answer.response()
        }

        routes.get("/api/tags/:name/posts", etag: true) { request, context in
            let name = try context.parameters.require("name", as: String.self)
            guard let page = try tags(context).posts(name, PageRequest<KeysetCursor>(request.query), caller: context.caller) else {
                throw APIError.notFound("no such tag")
            }
            var answer = JSONObject.success()
            answer.addRaw("posts", page.json)
            answer.add("next_cursor", page.nextCursor?.text)
            return answer.response()
        }
    }

    private static func sortOrder(_ text: String?) throws(APIError) -> SearchService.Sort {
        guard let text else { return .relevance }
        guard let sort = SearchService.Sort(rawValue: text) else { throw .malformed("sort must be relevance or recent") }
        return sort
    }
}

/// A page request whose cursor is read by the route itself (its form depends on the
/// search's type and order): `PageRequest` checks only the limit.
struct NoCursor: PageCursor {
    init(_ text: String) throws(APIError) {}
    var text: String { "" }
}
