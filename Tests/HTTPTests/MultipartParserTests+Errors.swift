import Testing
@testable import HTTP

private let head = "Content-Disposition: form-data; name=\"a\"\r\n"

extension MultipartParserTests {
    @Suite struct Errors {
        @Test(arguments: [
            ("no delimiter", ""),
            ("only preamble", "just some text\r\n"),
            ("content never closed", "--boundary\r\n\(head)\r\ncontent"),
            ("content then CRLF", "--boundary\r\n\(head)\r\ncontent\r\n"),
            ("delimiter without its line end", "--boundary\r\n\(head)\r\ncontent\r\n--boundary"),
            ("delimiter line never ended", "--boundary\r\n\(head)\r\ncontent\r\n--boundary  "),
            ("one dash", "--boundary\r\n\(head)\r\ncontent\r\n--boundary-"),
            ("head never ended", "--boundary\r\n\(head)"),
            ("head cut in a line", "--boundary\r\nContent-Disposition: form-da"),
            ("head cut before its CRLF", "--boundary\r\n\(head)\r"),
        ])
        func truncatedBody_isBadRequestAtFinish(_ name: String, _ body: String) {
            let error = expectFailure(Array(body.utf8))
            #expect(error?.status == .badRequest, "\(name)")
        }

        @Test(arguments: [
            ("bare LF in head", "--boundary\r\nContent-Disposition: form-data; name=\"a\"\n\r\n\r\n--boundary--"),
            ("bare LF ending head", "--boundary\r\n\(head)\n1\r\n--boundary--"),
            ("obs-fold", "--boundary\r\n\(head) folded\r\n\r\n1\r\n--boundary--"),
            ("no colon", "--boundary\r\n\(head)NoColon\r\n\r\n1\r\n--boundary--"),
            ("control in value", "--boundary\r\n\(head)X-A: a\rb\r\n\r\n1\r\n--boundary--"),
            ("no head", "--boundary\r\n\r\n1\r\n--boundary--"),
            ("no disposition", "--boundary\r\nContent-Type: text/plain\r\n\r\n1\r\n--boundary--"),
            ("attachment", "--boundary\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\n1\r\n--boundary--"),
            ("no name", "--boundary\r\nContent-Disposition: form-data; filename=\"a\"\r\n\r\n1\r\n--boundary--"),
            ("empty name", "--boundary\r\nContent-Disposition: form-data; name=\"\"\r\n\r\n1\r\n--boundary--"),
            ("two names", "--boundary\r\nContent-Disposition: form-data; name=a; NAME=b\r\n\r\n1\r\n--boundary--"),
            ("two dispositions", "--boundary\r\n\(head)\(head)\r\n1\r\n--boundary--"),
            ("two content types", "--boundary\r\n\(head)Content-Type: a/b\r\nContent-Type: c/d\r\n\r\n1\r\n--boundary--"),
            ("unterminated quote", "--boundary\r\nContent-Disposition: form-data; name=\"a\r\n\r\n1\r\n--boundary--"),
            ("bad escape", "--boundary\r\nContent-Disposition: form-data; name=\"a\\\u{01}\"\r\n\r\n1\r\n--boundary--"),
            ("junk after value", "--boundary\r\nContent-Disposition: form-data; name=\"a\"x\r\n\r\n1\r\n--boundary--"),
            ("boundary text in content", "--boundary\r\n\(head)\r\n1\r\n--boundaryX\r\n--boundary--"),
            ("one dash after boundary", "--boundary\r\n\(head)\r\n1\r\n--boundary-x"),
            ("bare LF after boundary", "--boundary\n\(head)\r\n1\r\n--boundary--"),
            ("CR without LF after boundary", "--boundary\r\r\n\(head)\r\n1\r\n--boundary--"),
            ("junk after padding", "--boundary  x\r\n\(head)\r\n1\r\n--boundary--"),
            ("boundary text in preamble", "preamble\r\n--boundary-ish\r\n--boundary--"),
        ])
        func malformedBody_isBadRequest(_ name: String, _ body: String) {
            let error = expectFailure(Array(body.utf8))
            #expect(error?.status == .badRequest, "\(name): \(String(describing: error))")
        }

        @Test func headOverLimit_isPayloadTooLarge() {
            var limits = MultipartParser.Limits()
            limits.maxPartHeadBytes = 100
            // The head counts its lines, their CRLFs and the empty line: `X: ` + filler + 4.
            func body(filler: Int) -> [UInt8] {
                Array("--boundary\r\n\(head)X: \(String(repeating: "v", count: filler))\r\n\r\n1\r\n--boundary--".utf8)
            }
            let atLimit = 100 - head.utf8.count - 7
            #expect(expectFailure(body(filler: atLimit), limits: limits) == nil)
            let unfinished = "--boundary\r\n\(head)X-Filler: \(String(repeating: "v", count: 60))\r\n"
            for body in [body(filler: atLimit + 1), Array(unfinished.utf8),
                         Array("--boundary\r\n\(String(repeating: "x", count: 101))".utf8)] {
                let error = expectFailure(body, limits: limits)
                #expect(error?.status == .payloadTooLarge)
            }
        }

        @Test func tooManyParts_isPayloadTooLarge() {
            var limits = MultipartParser.Limits()
            limits.maxParts = 3
            let three = multipartBody((1...3).map { field("f\($0)", "\($0)") })
            #expect(expectParts(three, limits: limits).count == 3)
            let four = multipartBody((1...4).map { field("f\($0)", "\($0)") })
            #expect(expectFailure(four, limits: limits)?.status == .payloadTooLarge)
        }

        @Test func invalidBoundary_failsTheParser() throws {
            var parser = MultipartParser(boundary: "")
            parser.feed(Array("----\r\n".utf8))
            #expect(throws: HTTPError.badRequest("invalid multipart boundary")) { try parser.next() }
        }

        @Test func failedParser_staysFailed() throws {
            var parser = MultipartParser(boundary: "boundary")
            parser.feed(Array("--boundary\r\nNoColon\r\n".utf8))
            let error = try #require(throws: HTTPError.self) { try parser.next() }
            parser.feed(multipartBody([field("a", "1")]))
            #expect(throws: error) { try parser.next() }
            #expect(throws: error) { try parser.finish() }
        }
    }
}
