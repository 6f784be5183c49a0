@testable import PostsClient
import Testing

/// The event-stream parser, fed the same stream cut at every place (and byte by byte):
/// the network may split a line, a CRLF or a UTF-8 character anywhere.
@Suite struct ServerSentEventParserTests {
    /// Parses `text` in two pieces cut at every offset, and in single bytes; all must agree.
    private static func everySplit(_ text: String, startingAfter lastEventID: String = "")
        -> (events: [ServerSentEvent], parser: ServerSentEventParser) {
        let bytes = Array(text.utf8)
        var whole = ServerSentEventParser(lastEventID: lastEventID)
        let expected = whole.parse(bytes)
        for cut in 0...bytes.count {
            var parser = ServerSentEventParser(lastEventID: lastEventID)
            let events = parser.parse(bytes[..<cut]) + parser.parse(bytes[cut...])
            #expect(events == expected, "cut at \(cut)")
            #expect(parser.lastEventID == whole.lastEventID && parser.reconnectionTime == whole.reconnectionTime)
        }
        var byByte = ServerSentEventParser(lastEventID: lastEventID)
        #expect(bytes.flatMap { byByte.parse([$0]) } == expected)
        return (expected, whole)
    }

    @Test func theServersFraming_givesOneEventPerChange() {
        let stream = "retry: 2000\n\nid: 17.0\nevent: post.created\ndata: {\"seq\":\"17.0\"}\n\n"
            + ": keep-alive\n\nid: 18.2\nevent: like.changed\ndata: {\"seq\":\"18.2\"}\n\n"
        let (events, parser) = Self.everySplit(stream)
        #expect(events == [ServerSentEvent(id: "17.0", type: "post.created", data: #"{"seq":"17.0"}"#),
                           ServerSentEvent(id: "18.2", type: "like.changed", data: #"{"seq":"18.2"}"#)])
        #expect(parser.reconnectionTime == .milliseconds(2000))
        #expect(parser.lastEventID == "18.2")
    }

    @Test func everyLineEnding_andMultiLineData() {
        let (events, _) = Self.everySplit("data: one\r\ndata: two\rdata:three\n\r\nevent: x\r\ndata\r\n\r\n")
        #expect(events == [ServerSentEvent(id: "", type: "message", data: "one\ntwo\nthree"),
                           ServerSentEvent(id: "", type: "x", data: "")])
    }

    @Test func aCRAtTheEndOfAPiece_andLFAtTheStartOfTheNext_endOneLine() {
        var parser = ServerSentEventParser()
        #expect(parser.parse(Array("data: a\r".utf8)).isEmpty)
        #expect(parser.parse(Array("\n".utf8)).isEmpty)
        #expect(parser.parse(Array("\r\n".utf8)) == [ServerSentEvent(id: "", type: "message", data: "a")])
    }

    @Test func multiByteCharacters_splitAnywhere_arriveWhole() {
        let (events, _) = Self.everySplit("id: é1\ndata: {\"title\":\"café 🎉 日本\"}\n\n")
        #expect(events == [ServerSentEvent(id: "é1", type: "message", data: "{\"title\":\"café 🎉 日本\"}")])
    }

    @Test func aLeadingByteOrderMark_isSkipped_onlyAtTheStart() {
        let (events, _) = Self.everySplit("\u{FEFF}data: a\n\n\u{FEFF}data: b\n\n")
        #expect(events.map(\.data) == ["a"])
        #expect(Self.everySplit("\u{FEFF}\n").events.isEmpty)
    }

    @Test func commentsUnknownFieldsAndEmptyEvents_dispatchNothing() {
        let (events, parser) = Self.everySplit(": hello\nfoo: bar\nevent: ignored\n\nid: 5\n\n")
        #expect(events.isEmpty)
        // An id alone still moves the position a reconnect resumes from.
        #expect(parser.lastEventID == "5")
    }

    @Test func idsWithNUL_andRetriesThatAreNotDigits_areIgnored() {
        let (events, parser) = Self.everySplit("retry: 15x\nretry: -3\nid: a\u{0}b\ndata: x\n\n", startingAfter: "4")
        #expect(events == [ServerSentEvent(id: "4", type: "message", data: "x")])
        #expect(parser.reconnectionTime == nil)
        #expect(Self.everySplit("retry:50\n").parser.reconnectionTime == .milliseconds(50))
    }

    @Test func aFieldWithoutColon_andOnlyOneLeadingSpaceRemoved() {
        let (events, _) = Self.everySplit("data:  two spaces\ndata\ndata:\n\n")
        #expect(events == [ServerSentEvent(id: "", type: "message", data: " two spaces\n\n")])
    }

    @Test func anUnfinishedEvent_isHeldUntilItsBlankLine_andSoIsItsID() {
        var parser = ServerSentEventParser()
        #expect(parser.parse(Array("id: 1\ndata: x\n".utf8)).isEmpty)
        #expect(parser.lastEventID == "")
        #expect(parser.parse(Array("\n".utf8)).count == 1)
        #expect(parser.lastEventID == "1")
    }

    /// A connection dropped in the middle of event 8: the resume asks for what follows 7,
    /// and the next connection's bytes are not glued to the half-read event.
    @Test func aNewConnection_forgetsTheHalfReadEvent_andResumesBeforeIt() {
        var parser = ServerSentEventParser()
        #expect(parser.parse(Array("id: 7\ndata: {\"a\":7}\n\nid: 8\ndata: {\"a\"".utf8)).map(\.id) == ["7"])
        #expect(parser.lastEventID == "7")
        parser.startConnection()
        let events = parser.parse(Array("retry: 2000\n\nid: 8\ndata: {\"a\":8}\n\n".utf8))
        #expect(events == [ServerSentEvent(id: "8", type: "message", data: #"{"a":8}"#)])
        #expect(parser.lastEventID == "8")
    }
}
