import CLibPQ
import Dispatch
import Synchronization

/// Asks the server to stop the statement of a connection given up after `queryTimeout`.
///
/// Closing the connection does not stop the server: it goes on with the statement it runs,
/// and then with what of the pipeline still waits unread in its socket. A write answered
/// 503 would land seconds later, after the client's retry and its next writes (a like
/// given again after it was taken back). A cancel request stops the running statement; the
/// rest of the pipeline up to its sync is then skipped and its implicit transaction rolled
/// back. (A write that committed just before still stands: a 503 says it may have.)
///
/// `PQcancel` opens a connection of its own, with no timeout in this libpq: the requests
/// go out from one background queue, never from the request's thread, and at most
/// `limit` wait there at once (a database cut off by the network would pile them up).
enum AbandonedStatements {
    static let limit = 64
    private static let queue = DispatchQueue(label: "posts-server.postgres.cancel")
    private static let waiting = Atomic<Int>(0)

    static func cancel(on handle: OpaquePointer) {
        guard let request = PQgetCancel(handle) else { return }
        let cancel = CancelRequest(request)
        guard waiting.add(1, ordering: .relaxed).newValue <= limit else {
            waiting.subtract(1, ordering: .relaxed)
            return
        }
        queue.async {
            defer { waiting.subtract(1, ordering: .relaxed) }
            cancel.send()
        }
    }
}

/// libpq's cancel object: what it needs to reach the server (address, process, key), apart
/// from the connection, which may be closed by the time it is sent.
private final class CancelRequest: @unchecked Sendable {
    private let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { PQfreeCancel(pointer) }

    func send() {
        var message = [CChar](repeating: 0, count: 256)
        _ = PQcancel(pointer, &message, Int32(message.count))
    }
}
