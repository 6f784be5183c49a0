/// HTTP/1.1 request framing (RFC 9112) as a pure state machine over bytes.
///
/// Feed it whatever the socket delivered, in any split, then call `next()` until it says
/// `.needMore`. A request yields `.head` (so the caller can pick the body's consumer and
/// limit, answer `100-continue` or refuse early), then its body as `.body` pieces as they
/// arrive, then `.end`. The body is never assembled here: a piece is a view of bytes
/// already received, so the parser holds no more than what one read delivered plus an
/// unfinished head. Bytes past the end stay buffered for the next pipelined request. It
/// does no I/O and never blocks.
public struct RequestParser: Sendable {
    public struct Limits: Sendable, Equatable {
        public var maxHeadBytes = 16 * 1024
        public var maxTargetBytes = 8 * 1024
        public var maxHeaderCount = 100
        /// The body limit used until the caller sets one for the request at hand.
        public var defaultBodyLimit = 1024 * 1024

        public init() {}
    }

    public enum Event: Sendable, Equatable {
        case needMore
        case head(RequestHead)
        /// The next piece of the body (never empty); valid until the next `feed`.
        case body(ArraySlice<UInt8>)
        case end
    }

    private enum State: Sendable {
        case head
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers(bytesSeen: Int)
        case failed(HTTPParseError)
    }

    public let limits: Limits
    /// The largest body accepted for the request whose head was just returned; the caller
    /// may lower or raise it before the next call to `next()`.
    public var bodyLimit: Int
    /// Body bytes of the current request handed out so far.
    public private(set) var bodyBytesReceived = 0

    private var state = State.head
    var buffer: [UInt8] = []
    var start = 0
    /// Where the search for the end of the head resumes, so a slow drip is not rescanned.
    var headScanFrom = 0
    private var framingChecked = false

    public init(limits: Limits = Limits()) {
        self.limits = limits
        self.bodyLimit = limits.defaultBodyLimit
    }

    public mutating func feed<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if start > 0 && (start == buffer.count || start >= 4096) {
            buffer.removeFirst(start)
            headScanFrom -= start
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Gives back a large buffer once everything in it is consumed: an idle keep-alive
    /// connection should not keep the memory of the last upload it carried.
    public mutating func releaseMemoryIfDrained() {
        guard start == buffer.count, buffer.capacity > Self.retainedCapacity else { return }
        buffer = []
        start = 0
        headScanFrom = 0
    }

    private static let retainedCapacity = 4096

    /// Bytes received but not yet consumed by a complete request.
    public var bufferedByteCount: Int { buffer.count - start }

    /// True between requests with nothing of the next one received yet.
    public var isIdle: Bool {
        if case .head = state { return start == buffer.count }
        return false
    }

    /// True while a head is complete and its body is still being read.
    public var isReadingBody: Bool {
        switch state {
        case .head, .failed: false
        default: true
        }
    }

    public mutating func next() throws(HTTPParseError) -> Event {
        do {
            return try step()
        } catch {
            state = .failed(error)
            throw error
        }
    }

    private mutating func step() throws(HTTPParseError) -> Event {
        while true {
            switch state {
            case .failed(let error):
                throw error
            case .head:
                guard let head = try parseHead() else { return .needMore }
                framingChecked = false
                bodyBytesReceived = 0
                bodyLimit = limits.defaultBodyLimit
                switch head.framing {
                case .none: state = .fixedBody(remaining: 0)
                case .contentLength(let length): state = .fixedBody(remaining: length)
                case .chunked: state = .chunkSize
                }
                return .head(head)
            case .fixedBody(let remaining):
                if !framingChecked {
                    framingChecked = true
                    if remaining > bodyLimit { throw .payloadTooLarge }
                }
                if remaining == 0 { return finishRequest() }
                guard let piece = takeBody(upTo: remaining) else { return .needMore }
                state = .fixedBody(remaining: remaining - piece.count)
                return .body(piece)
            case .chunkSize:
                guard let line = try takeLine(maxLength: 1024) else { return .needMore }
                let size = try Self.parseChunkSize(line)
                if size == 0 {
                    state = .trailers(bytesSeen: 0)
                } else {
                    if size > bodyLimit - bodyBytesReceived { throw .payloadTooLarge }
                    state = .chunkData(remaining: size)
                }
            case .chunkData(let remaining):
                if remaining == 0 {
                    state = .chunkDataEnd
                    continue
                }
                guard let piece = takeBody(upTo: remaining) else { return .needMore }
                state = .chunkData(remaining: remaining - piece.count)
                return .body(piece)
            case .chunkDataEnd:
                guard buffer.count - start >= 2 else { return .needMore }
                guard buffer[start] == UInt8(ascii: "\r"), buffer[start + 1] == UInt8(ascii: "\n") else {
                    throw .badRequest("chunk data is not followed by CRLF")
                }
                start += 2
                state = .chunkSize
            case .trailers(let bytesSeen):
                let before = start
                guard let line = try takeLine(maxLength: limits.maxHeadBytes) else {
                    if bytesSeen + (buffer.count - start) > limits.maxHeadBytes { throw .headersTooLarge }
                    return .needMore
                }
                if line.isEmpty { return finishRequest() }
                let seen = bytesSeen + (start - before)
                if seen > limits.maxHeadBytes { throw .headersTooLarge }
                // Trailer fields are checked like header fields, then dropped: nothing
                // downstream may treat them as if they had come before the body.
                _ = try Self.parseField(line)
                state = .trailers(bytesSeen: seen)
            }
        }
    }

    /// Up to `remaining` buffered body bytes, or nil when none has arrived yet.
    private mutating func takeBody(upTo remaining: Int) -> ArraySlice<UInt8>? {
        let available = min(remaining, buffer.count - start)
        guard available > 0 else { return nil }
        defer {
            start += available
            bodyBytesReceived += available
        }
        return buffer[start..<start + available]
    }

    private mutating func finishRequest() -> Event {
        state = .head
        headScanFrom = start
        return .end
    }

    /// The next CRLF-terminated line, without its terminator, or nil until it is complete.
    private mutating func takeLine(maxLength: Int) throws(HTTPParseError) -> ArraySlice<UInt8>? {
        var index = start
        let end = buffer.count
        while index < end {
            if buffer[index] == UInt8(ascii: "\n") {
                guard index > start, buffer[index - 1] == UInt8(ascii: "\r") else {
                    throw .badRequest("line ends with a bare LF")
                }
                let line = buffer[start..<index - 1]
                start = index + 1
                return line
            }
            index += 1
        }
        if end - start > maxLength { throw .badRequest("line is too long") }
        return nil
    }
}
