/// The request line and header fields: RFC 9112 §3 and §5, read strictly because
/// disagreements about framing between us and a proxy are how requests get smuggled.
extension RequestParser {
    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")
    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")
    private static let maxMethodBytes = 32

    /// The complete head at the front of the buffer, or nil while it is still arriving.
    mutating func parseHead() throws(HTTPParseError) -> RequestHead? {
        skipEmptyLinesBeforeRequest()
        guard let headEnd = try findHeadEnd() else {
            try checkIncompleteHead()
            return nil
        }
        let headBytes = buffer[start..<headEnd - 4]
        var lines = LineSplitter(bytes: headBytes)
        let requestLine = lines.next() ?? headBytes[headBytes.startIndex..<headBytes.startIndex]
        let (method, target, version) = try Self.parseRequestLine(requestLine, maxTarget: limits.maxTargetBytes)
        if headEnd - start > limits.maxHeadBytes { throw .headersTooLarge }

        var headers = HTTPHeaders()
        while let line = lines.next() {
            if headers.count == limits.maxHeaderCount { throw .headersTooLarge }
            let field = try Self.parseField(line)
            headers.add(field.name, field.value)
        }
        start = headEnd
        headScanFrom = headEnd
        return try Self.makeHead(method: method, target: target, version: version, headers: headers)
    }

    /// RFC 9112 §2.2: a server should ignore empty lines received before a request line
    /// (some clients send an extra CRLF after a POST body).
    private mutating func skipEmptyLinesBeforeRequest() {
        while buffer.count - start >= 2, buffer[start] == Self.cr, buffer[start + 1] == Self.lf {
            start += 2
        }
        headScanFrom = max(headScanFrom, start)
    }

    /// The index just past the head's terminating empty line. Rejects a bare LF as soon
    /// as it arrives instead of waiting for a terminator that a bare-LF client never sends.
    private mutating func findHeadEnd() throws(HTTPParseError) -> Int? {
        let from = headScanFrom
        let found: Int? = try buffer.withUnsafeBufferPointer { (bytes) throws(HTTPParseError) -> Int? in
            var index = from
            while index < bytes.count {
                if bytes[index] == Self.lf {
                    guard index > start, bytes[index - 1] == Self.cr else {
                        throw .badRequest("line ends with a bare LF")
                    }
                    if index - start >= 3, bytes[index - 2] == Self.lf, bytes[index - 3] == Self.cr {
                        return index + 1
                    }
                }
                index += 1
            }
            return nil
        }
        if found == nil { headScanFrom = buffer.count }
        return found
    }

    /// Refuses an unfinished head early when what has arrived already cannot become a
    /// request, so that garbage (or a TLS handshake) gets its 400 without a timeout.
    private func checkIncompleteHead() throws(HTTPParseError) {
        var index = start
        while index < buffer.count, buffer[index] != Self.space, buffer[index] != Self.cr {
            guard Self.isTokenByte(buffer[index]), index - start < Self.maxMethodBytes else {
                throw .badRequest("invalid request method")
            }
            index += 1
        }
        if let lineEnd = buffer[start...].firstIndex(of: Self.cr),
           lineEnd + 1 < buffer.count, buffer[lineEnd + 1] == Self.lf {
            _ = try Self.parseRequestLine(buffer[start..<lineEnd], maxTarget: limits.maxTargetBytes)
        } else if index < buffer.count, buffer.count - index - 1 > limits.maxTargetBytes,
                  !buffer[(index + 1)...(index + 1 + limits.maxTargetBytes)].contains(Self.space) {
            throw .uriTooLong
        }
        if buffer.count - start > limits.maxHeadBytes { throw .headersTooLarge }
    }

    static func parseRequestLine(
        _ line: ArraySlice<UInt8>, maxTarget: Int
    ) throws(HTTPParseError) -> (HTTPMethod, String, RequestHead.Version) {
        guard let methodEnd = line.firstIndex(of: space) else { throw .badRequest("malformed request line") }
        let methodBytes = line[line.startIndex..<methodEnd]
        guard !methodBytes.isEmpty, methodBytes.count <= maxMethodBytes, methodBytes.allSatisfy(isTokenByte) else {
            throw .badRequest("invalid request method")
        }
        let afterMethod = line[(methodEnd + 1)...]
        guard let targetEnd = afterMethod.firstIndex(of: space) else { throw .badRequest("malformed request line") }
        let targetBytes = afterMethod[afterMethod.startIndex..<targetEnd]
        if targetBytes.count > maxTarget { throw .uriTooLong }
        guard !targetBytes.isEmpty, targetBytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") }) else {
            throw .badRequest("invalid request target")
        }
        let version: RequestHead.Version
        switch String(decoding: line[(targetEnd + 1)...], as: UTF8.self) {
        case "HTTP/1.1": version = .http1_1
        case "HTTP/1.0": version = .http1_0
        default: throw .badRequest("unsupported HTTP version")
        }
        let method = HTTPMethod(String(decoding: methodBytes, as: UTF8.self))
        let target = try originForm(String(decoding: targetBytes, as: UTF8.self), method: method)
        return (method, target, version)
    }

    /// Reduces the request target to origin-form (`/path?query`), RFC 9112 §3.2.
    private static func originForm(_ target: String, method: HTTPMethod) throws(HTTPParseError) -> String {
        if target.hasPrefix("/") { return target }
        if target == "*" && method == .OPTIONS { return target }
        let lowered = target.lowercased()
        for scheme in ["http://", "https://"] where lowered.hasPrefix(scheme) {
            let afterScheme = target.dropFirst(scheme.count)
            guard let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
            let rest = afterScheme[authorityEnd...]
            return rest.hasPrefix("/") ? String(rest) : "/" + rest
        }
        throw .badRequest("invalid request target")
    }

    static func parseField(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> (name: String, value: String) {
        guard let first = line.first, first != space, first != tab else {
            throw .badRequest("obsolete line folding is not accepted")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw .badRequest("header line without a colon")
        }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else { throw .badRequest("invalid header name") }
        var value = line[(colon + 1)...]
        while let byte = value.first, byte == space || byte == tab { value.removeFirst() }
        while let byte = value.last, byte == space || byte == tab { value.removeLast() }
        guard value.allSatisfy({ $0 == tab || ($0 >= 0x20 && $0 != 0x7F) }) else {
            throw .badRequest("control character in header value")
        }
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    private static func makeHead(
        method: HTTPMethod, target: String, version: RequestHead.Version, headers: HTTPHeaders
    ) throws(HTTPParseError) -> RequestHead {
        let hosts = headers.values(of: "Host")
        if hosts.count > 1 { throw .badRequest("repeated Host header") }
        if version == .http1_1 && hosts.isEmpty { throw .badRequest("missing Host header") }

        var framing = RequestHead.BodyFraming.none
        let lengths = headers.values(of: "Content-Length")
        let codings = headers.tokens(of: "Transfer-Encoding")
        if !lengths.isEmpty && headers.contains("Transfer-Encoding") {
            throw .badRequest("both Content-Length and Transfer-Encoding")
        }
        if !lengths.isEmpty {
            framing = .contentLength(try contentLength(lengths))
        } else if headers.contains("Transfer-Encoding") {
            guard version == .http1_1 else { throw .badRequest("Transfer-Encoding in an HTTP/1.0 request") }
            guard codings == ["chunked"] else { throw .badRequest("unsupported Transfer-Encoding") }
            framing = .chunked
        }

        let connection = headers.tokens(of: "Connection")
        let keepAlive = switch version {
        case .http1_1: !connection.contains("close")
        case .http1_0: connection.contains("keep-alive") && !connection.contains("close")
        }
        let expectsContinue = version == .http1_1 && headers.tokens(of: "Expect").contains("100-continue")
        return RequestHead(
            method: method, target: target, version: version, headers: headers,
            framing: framing, keepAlive: keepAlive, expectsContinue: expectsContinue)
    }

    /// Every `Content-Length` value (repeated or comma-joined) must be the same decimal number.
    private static func contentLength(_ values: [String]) throws(HTTPParseError) -> Int {
        var result: Int?
        for element in values.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let digits = element.trimmingHTTPWhitespace()
            guard !digits.isEmpty, digits.utf8.count <= 18, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let length = Int(digits)
            else { throw .badRequest("invalid Content-Length") }
            if let result, result != length { throw .badRequest("conflicting Content-Length values") }
            result = length
        }
        guard let result else { throw .badRequest("invalid Content-Length") }
        return result
    }

    static func parseChunkSize(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> Int {
        var size = 0
        var index = line.startIndex
        while index < line.endIndex, let digit = hexValue(line[index]) {
            guard index - line.startIndex < 15 else { throw .badRequest("chunk size is too large") }
            size = size << 4 | digit
            index += 1
        }
        guard index > line.startIndex else { throw .badRequest("invalid chunk size") }
        var rest = line[index...]
        while let byte = rest.first, byte == space || byte == tab { rest.removeFirst() }
        // Chunk extensions carry nothing we use; they only have to be free of control bytes.
        guard rest.isEmpty || rest.first == UInt8(ascii: ";"),
              rest.allSatisfy({ $0 == tab || ($0 >= 0x20 && $0 != 0x7F) })
        else { throw .badRequest("invalid chunk size") }
        return size
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// RFC 9110 §5.6.2 tchar.
    static func isTokenByte(_ byte: UInt8) -> Bool { tokenBytes.contains(byte) }

    private static let tokenBytes = ByteSet(alphanumericsAnd: "!#$%&'*+-.^_`|~")
}

/// Splits a head (already known to use CRLF only) into its lines.
private struct LineSplitter {
    var bytes: ArraySlice<UInt8>

    mutating func next() -> ArraySlice<UInt8>? {
        guard !bytes.isEmpty else { return nil }
        guard let cr = bytes.firstIndex(of: UInt8(ascii: "\r")), cr + 1 < bytes.endIndex,
              bytes[cr + 1] == UInt8(ascii: "\n")
        else {
            defer { bytes = bytes[bytes.endIndex...] }
            return bytes
        }
        defer { bytes = bytes[(cr + 2)...] }
        return bytes[bytes.startIndex..<cr]
    }
}
