import Testing
@testable import HTTP

/// Weak ETags from the body and If-None-Match by weak comparison, without sockets.
@Suite struct EntityTagTests {
    private func head(_ ifNoneMatch: [String], method: HTTPMethod = .GET) -> RequestHead {
        RequestHead(method: method, target: "/api/posts/1", version: .http1_1,
                    headers: HTTPHeaders(ifNoneMatch.map { ("If-None-Match", $0) }),
                    framing: .none, keepAlive: true, expectsContinue: false)
    }

    @Test func tag_isWeak_andFollowsEveryByte() {
        let tag = EntityTag.weak(for: Array(#"{"like_count":1}"#.utf8))
        #expect(tag.hasPrefix("W/\"") && tag.hasSuffix("\"") && tag.count == 20)
        #expect(tag == EntityTag.weak(for: Array(#"{"like_count":1}"#.utf8)))
        #expect(tag != EntityTag.weak(for: Array(#"{"like_count":2}"#.utf8)))
        // CRC-32 and Adler-32 of nothing are 0 and 1; of "a", 0xe8b7be43 and 0x00620062.
        #expect(EntityTag.checksum64([]) == 0x0000_0000_0000_0001)
        #expect(EntityTag.checksum64([UInt8(ascii: "a")]) == 0xe8b7_be43_0062_0062)
    }

    @Test func ifNoneMatch_comparesWeakly_inListsAndStar() {
        let tag = #"W/"00000000000000ab""#
        let match: ([String]) -> Bool = { EntityTag.ifNoneMatch(head($0).headers, matches: tag) }
        #expect(match([tag]))
        #expect(match([#""00000000000000ab""#]))
        #expect(match([#"W/"x", W/"00000000000000ab""#]))
        #expect(match([#""a,b""#, tag]))
        #expect(match(["*"]))
        #expect(!match([]))
        #expect(!match([#"W/"00000000000000ac""#]))
        #expect(!match([#"W/"a,00000000000000ab""#]))
    }

    @Test func okAnswer_getsTheTag_and304WhenNamed() {
        let json = Response.json(Array(#"{"post":{}}"#.utf8))
        let tagged = json.withWeakETag(for: head([]))
        let tag = tagged.headers["ETag"]
        #expect(tagged.status == .ok && tag == EntityTag.weak(for: Array(#"{"post":{}}"#.utf8)))
        for method in [HTTPMethod.GET, .HEAD] {
            let notModified = json.withWeakETag(for: head([tag!], method: method))
            #expect(notModified.status == .notModified && notModified.body.length == 0)
            #expect(notModified.headers["ETag"] == tag && notModified.headers["Vary"] == "Accept-Encoding")
            #expect(notModified.headers["Content-Type"] == nil)
        }
        let text = String(decoding: json.withWeakETag(for: head([tag!])).serializeHead(
            requestID: "r", date: "d", keepAlive: true, version: .http1_1), as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 304 Not Modified\r\n") && !text.contains("Content-Length"))
    }

    @Test func otherStatuses_haveNoTag() {
        let created = Response.json(Array("{}".utf8), status: .created).withWeakETag(for: head(["*"]))
        #expect(created.status == .created && created.headers["ETag"] == nil)
    }
}
