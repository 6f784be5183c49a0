/// One event of a `text/event-stream`, as dispatched at its blank line.
struct ServerSentEvent: Sendable, Equatable {
    /// The last event id at dispatch (the stream's, not only this event's own `id:`).
    var id: String
    /// `event:`, or `message` when the event named none.
    var type: String
    /// The `data:` lines joined by newlines.
    var data: String
}

/// The event-stream interpretation of the WHATWG HTML standard (§9.2.6), fed bytes as they
/// arrive in whatever pieces the network cuts them: a line, a CRLF, or a UTF-8 character
/// may be split anywhere. A pure value: the stream's reader keeps one for the whole sequence
/// and calls `startConnection()` on each new connection, which keeps `lastEventID` and
/// `reconnectionTime` and forgets the half-read event a dropped connection left behind.
struct ServerSentEventParser: Sendable {
    /// The id to send as `Last-Event-ID` when reconnecting: set when an event is dispatched
    /// (its blank line), never by an `id:` line alone, so a connection dropped in the middle
    /// of an event resumes before that event and not after it.
    private(set) var lastEventID = ""
    /// The `id:` seen so far (the standard's "last event ID buffer").
    private var idBuffer = ""
    /// From `retry:`: how long to wait before reconnecting.
    private(set) var reconnectionTime: Duration?

    private var line: [UInt8] = []
    private var eventType = ""
    private var data = ""
    private var hasData = false
    /// A CR ended the last line: an LF right after it belongs to the same line end.
    private var afterCarriageReturn = false
    /// Before the first byte: a byte-order mark there is skipped.
    private var atStreamStart = true
    private var bomBytesSeen = 0

    init(lastEventID: String = "") {
        self.lastEventID = lastEventID
        idBuffer = lastEventID
    }

    /// A new connection: what the last one left half-read is dropped (the server sends that
    /// event again, after `lastEventID`), and it starts as a stream starts.
    mutating func startConnection() {
        idBuffer = lastEventID
        line.removeAll(keepingCapacity: true)
        eventType = ""
        data = ""
        hasData = false
        afterCarriageReturn = false
        atStreamStart = true
        bomBytesSeen = 0
    }

    /// The events completed by `bytes`.
    mutating func parse(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if atStreamStart, skipByteOrderMark(byte) { continue }
            if afterCarriageReturn {
                afterCarriageReturn = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            switch byte {
            case UInt8(ascii: "\n"):
                endLine(into: &events)
            case UInt8(ascii: "\r"):
                afterCarriageReturn = true
                endLine(into: &events)
            default:
                line.append(byte)
            }
        }
        return events
    }

    /// Consumes the bytes of a leading U+FEFF (EF BB BF); false once the start is past.
    private mutating func skipByteOrderMark(_ byte: UInt8) -> Bool {
        let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
        if byte == mark[bomBytesSeen] {
            bomBytesSeen += 1
            if bomBytesSeen == mark.count { atStreamStart = false }
            return true
        }
        // Not a mark after all: what was held back is the start of the first line.
        line += mark[0..<bomBytesSeen]
        atStreamStart = false
        return false
    }

    private mutating func endLine(into events: inout [ServerSentEvent]) {
        atStreamStart = false
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else { return dispatch(into: &events) }
        if line[0] == UInt8(ascii: ":") { return }
        let text = String(decoding: line, as: UTF8.self)
        let field: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            field = text[...]
            value = ""
        }
        switch field {
        case "event":
            eventType = String(value)
        case "data":
            if hasData { data += "\n" }
            data += value
            hasData = true
        case "id":
            if !value.contains("\u{0}") { idBuffer = String(value) }
        case "retry":
            if !value.isEmpty, value.allSatisfy({ $0.isASCII && $0.isNumber }), let milliseconds = Int(value) {
                reconnectionTime = .milliseconds(milliseconds)
            }
        default:
            break
        }
    }

    /// A blank line: the event so far, if it had data; either way its id counts from now on
    /// and a fresh one begins.
    private mutating func dispatch(into events: inout [ServerSentEvent]) {
        lastEventID = idBuffer
        defer {
            eventType = ""
            data = ""
            hasData = false
        }
        guard hasData else { return }
        events.append(ServerSentEvent(id: lastEventID, type: eventType.isEmpty ? "message" : eventType, data: data))
    }
}
