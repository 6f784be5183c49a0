/// A multipart/form-data body (RFC 7578, framed as RFC 2046 §5.1 says) as a pure state
/// machine over bytes.
///
/// Feed it the request body in whatever pieces the socket delivered, then call `next()`
/// until it says `.needMore`; call `finish()` when the body has ended. Each part comes out
/// as `.partHead`, its content in `.partData` pieces and `.partEnd`; `.end` follows the
/// close delimiter. Content is handed out as soon as it cannot be the start of a delimiter,
/// so a 10 MiB file passes through while the parser holds one read and a delimiter's length.
/// It does no I/O and never traps; after an error it stays failed.
public struct MultipartParser: Sendable {
    public struct Limits: Sendable, Equatable {
        /// A part's header lines with their CRLFs and the empty line that ends them.
        public var maxPartHeadBytes = 8 * 1024
        public var maxParts = 100

        public init() {}
    }

    public enum Event: Sendable, Equatable {
        case needMore
        case partHead(MultipartPartHead)
        /// The next piece of the current part's content, never empty. It shares the
        /// parser's storage: holding it across the next `feed` makes that feed copy.
        case partData(ArraySlice<UInt8>)
        case partEnd
        /// The close delimiter `--boundary--` was read; anything after it is ignored.
        case end
    }

    enum State: Sendable {
        /// Before the first delimiter: dropped.
        case preamble
        /// After a delimiter: transport padding, then the CRLF that starts a part.
        case delimiterLineEnd
        case head(bytesSeen: Int)
        case content
        /// `.partEnd` was returned for the close delimiter; `.end` comes next.
        case closing
        /// After the close delimiter: dropped.
        case epilogue
        case failed(HTTPError)
    }

    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let dash = UInt8(ascii: "-")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")

    public let limits: Limits
    /// `\r\n--boundary`, which ends the preamble and every part's content.
    let delimiter: [UInt8]
    private var state: State
    var buffer: [UInt8]
    var start = 0
    /// Where the search for the end of a head line resumes, so a slow drip is not rescanned.
    private var headScanFrom = 0
    private var headers = HTTPHeaders()
    private var partCount = 0

    /// A boundary that RFC 2046 does not allow (see `boundary(fromContentType:)`) leaves the
    /// parser failed with a 400 rather than trapping.
    public init(boundary: String, limits: Limits = Limits()) {
        self.limits = limits
        delimiter = Array("\r\n--\(boundary)".utf8)
        // The first delimiter may open the body with no CRLF before it. A CRLF put in front
        // lets one search find it there and after a preamble alike.
        buffer = [Self.cr, Self.lf]
        state = Self.isValidBoundary(boundary) ? .preamble : .failed(.badRequest("invalid multipart boundary"))
    }

    public mutating func feed<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        switch state {
        case .closing, .epilogue, .failed: return
        case .preamble, .delimiterLineEnd, .head, .content: break
        }
        // What is left after `start` is at most a head or a delimiter's length, so moving
        // it costs little; doing so only every 4 KiB keeps a drip of small reads cheap.
        if start > 0 && (start == buffer.count || start >= 4096) {
            buffer.removeFirst(start)
            headScanFrom = max(headScanFrom - start, 0)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Bytes received but not yet handed out or dropped (before the first delimiter, with
    /// the CRLF put in front of the body).
    public var bufferedByteCount: Int { buffer.count - start }

    public mutating func next() throws(HTTPError) -> Event {
        do {
            return try step()
        } catch {
            state = .failed(error)
            throw error
        }
    }

    /// Called when the request body has ended: a body cut short of its close delimiter is
    /// a 400, since its last part may be missing any number of bytes.
    public func finish() throws(HTTPError) {
        switch state {
        case .closing, .epilogue: return
        case .failed(let error): throw error
        case .preamble: throw .badRequest("multipart body has no boundary delimiter")
        case .head: throw .badRequest("multipart body ended inside a part's head")
        case .delimiterLineEnd, .content: throw .badRequest("multipart body ended before its closing boundary")
        }
    }

    private mutating func step() throws(HTTPError) -> Event {
        while true {
            switch state {
            case .failed(let error):
                throw error
            case .epilogue:
                return .needMore
            case .closing:
                state = .epilogue
                return .end
            case .preamble:
                if let event = try takeContent(inPart: false) { return event }
            case .content:
                if let event = try takeContent(inPart: true) { return event }
            case .delimiterLineEnd:
                guard try takeDelimiterLineEnd() else { return .needMore }
                try beginPart()
            case .head(let bytesSeen):
                if let event = try takeHeadLine(bytesSeen: bytesSeen) { return event }
            }
        }
    }

    /// Hands out (or, in the preamble, drops) what cannot be part of a delimiter; at a
    /// delimiter, ends the part. Nil when the state moved on without an event.
    private mutating func takeContent(inPart: Bool) throws(HTTPError) -> Event? {
        let search = searchDelimiter()
        let clearedEnd = switch search {
        case .notFound: buffer.count
        case .possible(let index), .found(let index): index
        }
        if clearedEnd > start {
            let cleared = buffer[start..<clearedEnd]
            start = clearedEnd
            if inPart { return .partData(cleared) }
        }
        guard case .found = search else { return .needMore }
        let after = start + delimiter.count
        let first = buffer[after], second = buffer[after + 1]
        if first == Self.dash && second == Self.dash {
            start = buffer.count
            state = inPart ? .closing : .epilogue
            return inPart ? .partEnd : .end
        }
        // RFC 2046: a boundary must not occur in content, so `\r\n--boundary` followed by
        // anything else is a malformed body, not data.
        guard first == Self.space || first == Self.tab || (first == Self.cr && second == Self.lf) else {
            throw .badRequest("multipart boundary is followed by something other than CRLF or --")
        }
        start = after
        state = .delimiterLineEnd
        return inPart ? .partEnd : nil
    }

    private mutating func beginPart() throws(HTTPError) {
        guard partCount < limits.maxParts else {
            throw HTTPError(.payloadTooLarge, message: "multipart body has more than \(limits.maxParts) parts")
        }
        partCount += 1
        headers = HTTPHeaders()
        headScanFrom = start
        state = .head(bytesSeen: 0)
    }

    /// Takes one line of a part's head; at the empty line that ends it, returns the head.
    private mutating func takeHeadLine(bytesSeen: Int) throws(HTTPError) -> Event? {
        guard let lineEnd = buffer[headScanFrom...].firstIndex(of: Self.lf) else {
            headScanFrom = buffer.count
            if bytesSeen + buffer.count - start > limits.maxPartHeadBytes { throw headTooLarge }
            return .needMore
        }
        // Refused as soon as it arrives, like the request head's: a bare-LF client would
        // never send the CRLF we would otherwise wait for.
        guard lineEnd > start, buffer[lineEnd - 1] == Self.cr else {
            throw .badRequest("multipart part head has a line ending in a bare LF")
        }
        let seen = bytesSeen + lineEnd + 1 - start
        if seen > limits.maxPartHeadBytes { throw headTooLarge }
        let line = buffer[start..<lineEnd - 1]
        start = lineEnd + 1
        headScanFrom = start
        if line.isEmpty {
            let head = try MultipartPartHead(headers: headers)
            headers = HTTPHeaders()
            state = .content
            return .partHead(head)
        }
        do {
            let field = try RequestParser.parseField(line)
            headers.add(field.name, field.value)
        } catch {
            throw .badRequest("multipart part head: \(error.message)")
        }
        state = .head(bytesSeen: seen)
        return nil
    }

    private var headTooLarge: HTTPError {
        HTTPError(.payloadTooLarge, message: "multipart part head is larger than \(limits.maxPartHeadBytes) bytes")
    }
}
