import CLinux
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback port where nothing listens and nothing will: a socket bound to it, never
/// listening, held until `close()`. A connection to it is refused at once. (A stopped
/// server's port is not that: another test's server may be given it the next moment.)
public final class RefusedPort: @unchecked Sendable {
    public let port: Int
    private var fd: Int32

    public init() throws {
        let socket = clinux_socket_blocking(AF_INET)
        guard socket >= 0 else { throw RawHTTPClient.Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            Self.closeDescriptor(socket)
            throw RawHTTPClient.Failure(description: "bind: errno \(code)")
        }
        fd = socket
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    public func close() {
        guard fd >= 0 else { return }
        Self.closeDescriptor(fd)
        fd = -1
    }

    private static func closeDescriptor(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }

    deinit { close() }
}
