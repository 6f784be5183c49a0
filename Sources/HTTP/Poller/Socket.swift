import CLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call, with the errno captured where it happened.
public struct SocketError: Error, Sendable, CustomStringConvertible {
    public let operation: String
    public let errno: Int32

    init(_ operation: String, errno: Int32 = systemErrno) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String { "\(operation) failed: \(String(decoding: Array(UnsafeBufferPointer(start: strerror(errno), count: strlen(strerror(errno)))).map { UInt8(bitPattern: $0) }, as: UTF8.self)) (errno \(errno))" }
}

/// The raw socket calls the server makes, each checked where it is made.
enum Socket {
    /// A non-blocking listening socket bound to `host` (an IPv4 or IPv6 literal, or a
    /// name the resolver knows) and `port` (0 picks a free one).
    static func listen(host: String, port: Int, backlog: Int32 = 4096) throws -> (fd: Int32, port: Int) {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = clinux_sock_stream()
        var list: UnsafeMutablePointer<addrinfo>?
        let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let status = getaddrinfo(bareHost, String(port), &hints, &list)
        guard status == 0, let info = list else {
            throw SocketError("resolving \(host)", errno: status == EAI_SYSTEM ? systemErrno : EINVAL)
        }
        defer { freeaddrinfo(list) }

        let fd = clinux_socket_nonblocking(info.pointee.ai_family)
        guard fd >= 0 else { throw SocketError("socket") }
        do {
            var on: Int32 = 1
            guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                throw SocketError("setsockopt(SO_REUSEADDR)")
            }
            guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
                throw SocketError("bind to \(host):\(port)")
            }
            guard systemListen(fd, backlog) == 0 else { throw SocketError("listen") }
            return (fd, try localPort(of: fd))
        } catch {
            systemClose(fd)
            throw error
        }
    }

    static func localPort(of fd: Int32) throws -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { throw SocketError("getsockname") }
        let family = storage.ss_family
        return withUnsafePointer(to: &storage) { pointer in
            if family == sa_family_t(AF_INET6) {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        }
    }

    enum AcceptResult {
        case accepted(fd: Int32, remoteAddress: String)
        case wouldBlock
        case failed(SocketError)
    }

    static func accept(_ listener: Int32) -> AcceptResult {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        while true {
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { clinux_accept_nonblocking(listener, $0, &length) }
            }
            if fd >= 0 {
                var on: Int32 = 1
                // Responses are written whole; Nagle would only delay them.
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                return .accepted(fd: fd, remoteAddress: address(of: &storage))
            }
            switch errno {
            case EINTR, ECONNABORTED: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .failed(SocketError("accept"))
            }
        }
    }

    private static func address(of storage: inout sockaddr_storage) -> String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = storage.ss_family
        withUnsafePointer(to: &storage) { pointer in
            if family == sa_family_t(AF_INET6) {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    var address = $0.pointee.sin6_addr
                    _ = inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
                }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    var address = $0.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
                }
            }
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    enum IOResult {
        case transferred(Int)
        case wouldBlock
        /// The peer closed its side (read of 0) or the connection broke.
        case closed
    }

    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        while true {
            let count = systemRead(fd, buffer.baseAddress, buffer.count)
            if count > 0 { return .transferred(count) }
            if count == 0 { return .closed }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .closed
            }
        }
    }

    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> IOResult {
        while true {
            // A peer that went away is an error here, not a SIGPIPE (MSG_NOSIGNAL or SO_NOSIGPIPE).
            let count = send(fd, bytes.baseAddress, bytes.count, clinux_send_flags())
            if count >= 0 { return .transferred(count) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .closed
            }
        }
    }

    /// sendfile(2) has no MSG_NOSIGNAL: a client that resets its connection while a file
    /// goes out raises SIGPIPE, whose default action ends the process (seen under wrk, whose
    /// connections close mid-image at the end of a run). Ignored process-wide, as servers
    /// do; a write to a closed socket is then an EPIPE, which closes that connection only.
    static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Sends up to `count` bytes of a file from `offset` (advanced by what went out) with
    /// sendfile(2): the kernel copies from the page cache to the socket.
    static func sendFile(_ fd: Int32, from file: Int32, offset: inout Int, count: Int) -> IOResult {
        while true {
            var position = Int64(offset)
            let sent = clinux_sendfile(fd, file, &position, count)
            if sent > 0 {
                offset = Int(position)
                return .transferred(sent)
            }
            // 0 with bytes still due: the file is shorter than it said; the response cannot
            // be completed, so the connection must end.
            if sent == 0 { return .closed }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .closed
            }
        }
    }

    static func close(_ fd: Int32) {
        systemClose(fd)
    }

    /// Raises the soft limit on open files to the hard limit: every connection is a file.
    public static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(clinux_rlimit_nofile(), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        if setrlimit(clinux_rlimit_nofile(), &limit) != 0 {
            // macOS reports an unlimited hard limit yet refuses a soft one above OPEN_MAX
            // (10240); its default soft limit of 256 would be a small server.
            limit.rlim_cur = min(limit.rlim_max, 10_240)
            _ = setrlimit(clinux_rlimit_nofile(), &limit)
        }
    }
}
