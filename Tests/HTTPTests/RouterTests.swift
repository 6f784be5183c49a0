import Logging
import Testing
@testable import HTTP

@Suite struct RouterTests {
    private func makeRouter() -> Router {
        var router = Router()
        let ok: Router.Handler = { _, _ in Response() }
        router.get("/api/posts/:id", ok)
        router.patch("/api/posts/:id", ok)
        router.get("/api/posts/recent", ok)
        router.post("/api/posts/create", ok)
        router.get("/api/posts/:id/children", ok)
        router.get("/uploads/:name", ok)
        return router
    }

    private func pattern(_ match: Router.Match) -> String? {
        if case .found(let route, _) = match { route.pattern } else { nil }
    }

    @Test func routes_listEveryMethodAndPatternOnce() {
        let routes = makeRouter().routes.map { "\($0.method) \($0.pattern)" }
        #expect(routes == ["GET /api/posts/:id", "PATCH /api/posts/:id", "GET /api/posts/recent", "POST /api/posts/create",
                           "GET /api/posts/:id/children", "GET /uploads/:name"])
    }

    @Test func literalSegment_winsOverParameter() {
        let router = makeRouter()
        #expect(pattern(router.match(method: .GET, path: "/api/posts/recent")) == "/api/posts/recent")
        #expect(pattern(router.match(method: .GET, path: "/api/posts/12")) == "/api/posts/:id")
        #expect(pattern(router.match(method: .GET, path: "/api/posts/12/children")) == "/api/posts/:id/children")
    }

    /// A literal path found by one lookup answers as the segment-by-segment match does: an
    /// escaped spelling of it is the same resource, and an escaped "/" is no separator.
    @Test func literalPaths_matchSpelledAnyWay_butAnEscapedSlashSeparatesNothing() {
        let router = makeRouter()
        #expect(pattern(router.match(method: .GET, path: "/api/posts/rec%65nt")) == "/api/posts/recent")
        #expect(pattern(router.match(method: .POST, path: "/api/posts/create")) == "/api/posts/create")
        #expect(pattern(router.match(method: .GET, path: "/api/posts/recent%2Fx")) == "/api/posts/:id")
        #expect(pattern(router.match(method: .GET, path: "/api%2Fposts/recent")) == nil)
        guard case .methodNotAllowed(let allowed) = router.match(method: .GET, path: "/api/posts/create") else {
            Issue.record("expected 405")
            return
        }
        #expect(allowed.map(\.rawValue) == ["POST"])
    }

    @Test func knownPathOtherMethod_isMethodNotAllowedWithAllow() {
        guard case .methodNotAllowed(let allowed) = makeRouter().match(method: .DELETE, path: "/api/posts/5") else {
            Issue.record("expected 405")
            return
        }
        #expect(allowed.map(\.rawValue) == ["GET", "HEAD", "PATCH"])
    }

    @Test func head_usesTheGetRoute() {
        #expect(pattern(makeRouter().match(method: .HEAD, path: "/api/posts/recent")) == "/api/posts/recent")
    }

    @Test func unknownPaths_areNotFound() {
        let router = makeRouter()
        for path in ["/", "/api", "/api/posts/1/2/3", "/api/posts/", "/api/posts//children", "/api/posts/%zz"] {
            guard case .notFound = router.match(method: .GET, path: Substring(path)) else {
                Issue.record("\(path) should be 404")
                continue
            }
        }
    }

    @Test func parameters_arePercentDecodedAndTyped() throws {
        guard case .found(_, let parameters) = makeRouter().match(method: .GET, path: "/uploads/a%20b.png") else {
            Issue.record("expected a match")
            return
        }
        #expect(parameters["name"] == "a b.png")
        #expect(throws: HTTPError.notFound()) { try parameters.require("name", as: Int64.self) }
        guard case .found(_, let numeric) = makeRouter().match(method: .GET, path: "/api/posts/42") else { return }
        #expect(try numeric.require("id", as: Int64.self) == 42)
    }

    @Test func int64Parameter_acceptsOnlyPlainDigits() {
        #expect(Int64(pathParameter: "42") == 42)
        for text in ["", "+1", "-1", "1.0", " 1", "0x10", "99999999999999999999", "١٢"] {
            #expect(Int64(pathParameter: text) == nil, "\(text)")
        }
    }

    @Test func queryParameters_areDecoded() throws {
        let query = try #require(QueryParameters(parsing: "limit=5&cursor=a%2Bb&name=x+y&flag&limit=9"))
        #expect(query["limit"] == "5")
        #expect(query["cursor"] == "a+b")
        #expect(query["name"] == "x y")
        #expect(query["flag"] == "")
        #expect(QueryParameters(parsing: "a=%zz") == nil)
        #expect(QueryParameters(parsing: "a=%ff") == nil)
    }

    @Test func errorRenderer_keepsTheStatusAndAddsTheErrorsHeaders() {
        let error = HTTPError(.tooManyRequests, message: "slow down", headers: HTTPHeaders([("Retry-After", "7")]))
        let response = ErrorRenderer.plainText.response(for: error)
        #expect(response.status.code == 429)
        #expect(response.headers["Retry-After"] == "7")
        #expect(String(decoding: response.body.inlineBytes ?? [], as: UTF8.self) == "429 Too Many Requests: slow down\n")
    }
}

@Suite struct HTTPDateTests {
    @Test func dateHeader_isIMFFixdate() {
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }
}
