import CLibPQ
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// LISTEN/NOTIFY: a connection that listens waits on its socket for notifications, the way
/// an instance learns at once that another one has committed something.
extension PostgresConnection {
    /// Starts listening on a channel; the name is a constant of this codebase, never input.
    public func listen(unsafeChannel channel: String) throws(PostgresError) {
        try execute(unsafeSQL: "LISTEN \(channel)")
    }

    /// Waits up to `timeout` for notifications, or for `wakeDescriptor` (a pipe's read end
    /// the caller drains) to become readable, and returns how many notifications arrived.
    /// Their payloads are dropped: they are wake-ups. Throws when the connection is lost,
    /// so the caller reconnects.
    public func awaitNotifications(timeout: Duration, orReadable wakeDescriptor: Int32? = nil) throws(PostgresError) -> Int {
        guard let handle else { throw PostgresError(.connectionLost, details: "connection is closed") }
        var count = drainNotifications(handle)
        if count > 0 { return count }
        let milliseconds = Int32(max(0, timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))
        var descriptors = [pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)]
        if let wakeDescriptor { descriptors.append(pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)) }
        let ready = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
        if ready < 0 && errno != EINTR { throw connectionError(handle, sql: "(waiting for notifications)", file: #fileID, line: #line) }
        if ready > 0 && descriptors[0].revents != 0 {
            guard PQconsumeInput(handle) == 1 else {
                throw connectionError(handle, sql: "(waiting for notifications)", file: #fileID, line: #line)
            }
            count = drainNotifications(handle)
        }
        return count
    }

    private func drainNotifications(_ handle: OpaquePointer) -> Int {
        var count = 0
        while let notification = PQnotifies(handle) {
            PQfreemem(notification)
            count += 1
        }
        return count
    }
}
