import HTTP
@testable import PostsServer
import Testing

/// API.md's error envelope and code table, as the server renders every error.
@Suite struct ErrorEnvelopeTests {
    private static func text(_ error: HTTPError) -> String {
        String(decoding: ErrorEnvelope.renderer.response(for: error).body.inlineBytes ?? [], as: UTF8.self)
    }

    @Test func envelope_isAPIShaped() {
        let response = ErrorEnvelope.renderer.response(for: HTTPError(.conflict, message: "taken \"x\""))
        #expect(response.status.code == 409)
        #expect(response.headers["Content-Type"] == Response.jsonContentType)
        #expect(Self.text(HTTPError(.conflict, message: "taken \"x\""))
            == #"{"status":"error","error":"conflict","message":"taken \"x\""}"#)
    }

    @Test func aCodeNamedByTheThrower_winsOverTheTable() {
        #expect(Self.text(HTTPError(.badRequest, code: "cursor_expired", message: "m"))
            == #"{"status":"error","error":"cursor_expired","message":"m"}"#)
    }

    @Test(arguments: [(400, "bad_request"), (401, "unauthorized"), (403, "forbidden"), (404, "not_found"),
                      (405, "method_not_allowed"), (408, "request_timeout"), (409, "conflict"), (410, "gone"),
                      (413, "payload_too_large"), (414, "uri_too_long"), (415, "unsupported_media_type"),
                      (422, "validation_failed"), (429, "rate_limited"), (431, "headers_too_large"),
                      (503, "unavailable"), (500, "internal"), (502, "internal")])
    func table_isAPIs(_ status: Int, _ code: String) {
        #expect(ErrorEnvelope.code(for: HTTPStatus(status, "x")) == code)
    }
}
