import CLinux
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A blocking loopback client that sends exact bytes and reads responses one by one, so
/// tests can speak malformed, pipelined or slow HTTP. Every read is bounded by a timeout.
/// `send` keeps no state, so one thread may send while another reads; reads are one thread's.
public final class RawHTTPClient: @unchecked Sendable {
    public struct Response: Sendable {
        public let status: Int
        public let headers: [(name: String, value: String)]
        public let body: [UInt8]

        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        public var text: String { String(decoding: body, as: UTF8.self) }

        /// The body as a JSON object.
        public var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let fd: Int32
    private var buffer: [UInt8] = []

    /// Bytes received and not yet taken as part of a response (all of them after `waitForClose`).
    public var bufferedByteCount: Int { buffer.count }

    public init(port: Int, host: String = "127.0.0.1", timeout: Duration = .seconds(5)) throws {
        fd = try Self.connectedSocket(port: port, host: host, timeout: timeout)
    }

    /// The socket is made and connected before `fd` is set: a class whose init throws after
    /// its properties are set runs its deinit, which would close the descriptor a second
    /// time — by then perhaps another thread's socket.
    private static func connectedSocket(port: Int, host: String, timeout: Duration) throws -> Int32 {
        let isIPv6 = host.contains(":")
        let fd = clinux_socket_blocking(isIPv6 ? AF_INET6 : AF_INET)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var timeval = timeval(tv_sec: Int(timeout.components.seconds),
                              tv_usec: suseconds_t(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeval, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeval, socklen_t(MemoryLayout<timeval>.size))
        let result: Int32
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: "connect to \(host):\(port): errno \(code)")
        }
        return fd
    }

    deinit { close(fd) }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { sendWithoutSignal(fd, $0) }
            guard count > 0 else { throw Failure(description: "send: errno \(errno)") }
            offset += count
        }
    }

    /// Half-closes: the server sees end of input but can still answer.
    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// True when the server has closed the connection while it was idle (an idle timeout on
    /// a machine slow enough to outlast it): nothing buffered, and the socket reads as ended
    /// or reset without waiting. What a keep-alive client checks before it reuses one.
    public var isClosedByPeer: Bool {
        guard buffer.isEmpty else { return false }
        var probe = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&probe, 1, 0) == 1 else { return false }
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// Reads until the connection is closed by the server; true if it closed (not timed out).
    public func waitForClose() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// Reads one response. `forHead` means the response to a HEAD request: no body follows.
    public func readResponse(forHead: Bool = false) throws -> Response {
        let head = try readHead()
        let (status, headers) = (head.status, head.headers)
        let noBody = forHead || status == 100 || status == 204 || status == 304
        let chunked = headers.contains { $0.name.lowercased() == "transfer-encoding" && $0.value.lowercased() == "chunked" }
        if chunked && !noBody {
            var body: [UInt8] = []
            while let chunk = try readChunk() { body += chunk }
            return Response(status: status, headers: headers, body: body)
        }
        let length = headers.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) } ?? 0
        let bodyLength = noBody ? 0 : length
        while buffer.count < bodyLength { try fill() }
        let body = Array(buffer[..<bodyLength])
        buffer.removeFirst(bodyLength)
        return Response(status: status, headers: headers, body: body)
    }

    /// Reads only the head of a response whose body is a stream; then `readChunk()` each piece.
    public func readHead() throws -> Response {
        let headEnd = try readUntilHeadEnd()
        let headText = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line in \(headText)")
        }
        let headers = lines.map { line -> (name: String, value: String) in
            let colon = line.firstIndex(of: ":")!
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return Response(status: status, headers: headers, body: [])
    }

    /// The next chunk of a chunked body; nil after the last (zero-size) chunk and its trailer.
    public func readChunk() throws -> [UInt8]? {
        let sizeLine = try readLine()
        guard let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) else {
            throw Failure(description: "bad chunk size line \(sizeLine)")
        }
        if size == 0 {
            while try !readLine().isEmpty {}
            return nil
        }
        while buffer.count < size + 2 { try fill() }
        let chunk = Array(buffer[..<size])
        guard buffer[size] == 13, buffer[size + 1] == 10 else { throw Failure(description: "chunk without CRLF") }
        buffer.removeFirst(size + 2)
        return chunk
    }

    /// Everything until the server closes the connection (an HTTP/1.0 stream's body).
    public func readUntilClose() throws -> [UInt8] {
        guard waitForClose() else { throw Failure(description: "the connection did not close") }
        defer { buffer = [] }
        return buffer
    }

    private func readLine() throws -> String {
        while true {
            if let end = buffer.firstRange(of: [13, 10]) {
                let line = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                buffer.removeFirst(end.upperBound)
                return line
            }
            try fill()
        }
    }

    /// Sends a request and reads its response.
    public func exchange(_ request: String) throws -> Response {
        try send(request)
        return try readResponse(forHead: request.hasPrefix("HEAD "))
    }

    private func readUntilHeadEnd() throws -> Int {
        while true {
            if let end = buffer.firstRange(of: [13, 10, 13, 10]) { return end.lowerBound }
            try fill()
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count == 0 { throw Failure(description: "connection closed by the server") }
        if count < 0 { throw Failure(description: "recv: errno \(errno)") }
        buffer.append(contentsOf: chunk[..<count])
    }
}

/// At file scope, where `send` is the C library's and not the client's own method.
private func sendWithoutSignal(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
    send(fd, bytes.baseAddress, bytes.count, clinux_send_flags())
}
