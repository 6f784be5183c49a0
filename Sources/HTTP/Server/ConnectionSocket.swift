import Locking
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A connection's descriptor, closed exactly once. Its owner reads and writes `fd` freely
/// and is the only one to close it; another thread may only cut it off (shutdown), and the
/// lock makes "still open" and that shutdown one step: a shutdown never lands on a closed
/// descriptor whose number a newer socket has reused.
final class ConnectionSocket: Sendable {
    let fd: Int32
    private let isOpen = ParkingLock(true)

    init(fd: Int32) { self.fd = fd }

    /// Ends both directions now; the owner still closes the descriptor.
    func cutOff() {
        isOpen.withLock { open in
            if open { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    func close() {
        isOpen.withLock { open in
            guard open else { return }
            open = false
            Socket.close(fd)
        }
    }
}
