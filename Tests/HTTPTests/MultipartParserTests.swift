import Testing
@testable import HTTP

/// JPEG-looking bytes holding everything that resembles a delimiter without being one.
private let jpegBytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + Array(0...255)
    + Array("\r\n--".utf8) + Array("x--\(fireflyBoundary)\r\n".utf8) + Array("\r\n--\(fireflyBoundary.dropLast())".utf8)
    + Array("\r--\(fireflyBoundary)\n--\(fireflyBoundary)\r\n-\(fireflyBoundary)\r\r\n\r\n".utf8) + [0xFF, 0xD9]

private let fireflyBoundary = "----FireflyFormBoundary7MA4YWxkTrZu0gW"

private let fireflyFields = [
    ("email", "ann@example.com"), ("title", "Fireflies"), ("summary", "Lights\r\nin the dark"),
    ("body", "They blink -- and --\(fireflyBoundary) is only text here."), ("timezone", "Europe/Berlin"),
    ("parent_id", "42"),
]

private let fireflyForm = multipartBody(
    fireflyFields.map { field($0, $1) }
        + [("Content-Disposition: form-data; name=\"image\"; filename=\"image.jpg\"\r\nContent-Type: image/jpeg\r\n",
            jpegBytes)],
    boundary: fireflyBoundary)

@Suite struct MultipartParserTests {
    @Test func fireflyForm_yieldsTextPartsThenTheImage() {
        let parts = expectParts(fireflyForm, boundary: fireflyBoundary)
        #expect(parts.map(\.head.name) == fireflyFields.map(\.0) + ["image"])
        #expect(parts.dropLast().map(\.text) == fireflyFields.map(\.1))
        #expect(parts.dropLast().allSatisfy { $0.head.filename == nil && $0.head.contentType == nil })
        let image = parts.last
        #expect(image?.head.filename == "image.jpg")
        #expect(image?.head.contentType == "image/jpeg")
        #expect(image?.head.headers.count == 2)
        #expect(image?.content == jpegBytes)
    }

    @Test func delimiter_cutAtEveryPosition_changesNothing() {
        let body = multipartBody([field("a", "one\r\n"), field("b", "\r\ntwo")])
        let parts = expectParts(body, splits: (0...body.count).map { .twoPieces(at: $0) })
        #expect(parts.map(\.text) == ["one\r\n", "\r\ntwo"])
    }

    @Test func crlfAndDashesInContent_areContent() {
        let contents = ["\r\n", "\r\n\r\n", "--", "\r\n--", "\r\n--boundar", "--boundary", "\r\r\n--", "a\r\n-boundary"]
        let body = multipartBody(contents.enumerated().map { field("f\($0)", $1) })
        #expect(expectParts(body).map(\.text) == contents)
    }

    @Test func dispositionParameters_quotedUnquotedAndEscaped_areRead() {
        let heads = [
            "Content-Disposition: form-data; name=title\r\n",
            "content-disposition: FORM-DATA; NAME=\"photo\"; FileName=\"my \\\"best\\\" \\\\ shot.jpg\"\r\n",
            "Content-Disposition: form-data;name=\"a;b=c\";filename=plain.txt\r\nContent-Type: text/plain\r\n",
            "Content-Disposition:form-data ; name = \"spaced\" ; filename*=UTF-8''ignored.txt ;\r\n",
            "X-Other: 1\r\nContent-Disposition: form-data; name=\"ünïcode\"; filename=\"\"\r\n",
        ]
        let parts = expectParts(multipartBody(heads.map { ($0, []) }))
        #expect(parts.map(\.head.name) == ["title", "photo", "a;b=c", "spaced", "ünïcode"])
        #expect(parts.map(\.head.filename) == [nil, "my \"best\" \\ shot.jpg", "plain.txt", nil, ""])
        #expect(parts.map(\.head.contentType) == [nil, nil, "text/plain", nil, nil])
        #expect(parts.last?.head.headers["x-other"] == "1")
    }

    @Test func preambleAndEpilogue_areIgnored() {
        let body = multipartBody(
            [field("a", "1")], preamble: "A preamble, with --boundary inside a line.\r\nAnd more.",
            epilogue: "\r\nAn epilogue\r\n--boundary\r\nno head at all\n--boundary-- x")
        #expect(expectParts(body).map(\.text) == ["1"])
        #expect(expectParts(Array("\r\n".utf8) + multipartBody([field("a", "1")])).map(\.text) == ["1"])
    }

    @Test func emptyContent_yieldsNoData() {
        let parts = expectParts(multipartBody([field("empty", ""), field("also", "")]))
        #expect(parts.map(\.text) == ["", ""])
    }

    @Test func closeDelimiterAlone_isAnEmptyForm() {
        #expect(expectParts(Array("--boundary--".utf8)).isEmpty)
        #expect(expectParts(Array("--boundary--\r\n".utf8)).isEmpty)
    }

    @Test func transportPadding_afterDelimiters_isAllowed() {
        let body = "--boundary \t \r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--boundary\t\r\n"
            + "Content-Disposition: form-data; name=\"b\"\r\n\r\n2\r\n--boundary-- \r\n"
        #expect(expectParts(Array(body.utf8)).map(\.text) == ["1", "2"])
    }

    @Test func boundaryWithSpacesAndPunctuation_works() {
        let boundary = "'()+_,-./:=? x"
        let parts = expectParts(multipartBody([field("a", "--'()+_")], boundary: boundary), boundary: boundary)
        #expect(parts.map(\.text) == ["--'()+_"])
    }

    @Test func endEvent_isFollowedOnlyByNeedMore() throws {
        var parser = MultipartParser(boundary: "boundary")
        parser.feed(multipartBody([field("a", "1")]))
        let events = try drain(&parser)
        #expect(events.count == 4)
        #expect(events.last == .end)
        parser.feed(Array("--boundary\r\nmore garbage".utf8))
        #expect(try parser.next() == .needMore)
        #expect(parser.bufferedByteCount == 0)
        try parser.finish()
    }
}
