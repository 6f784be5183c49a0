import Locking

/// The disk writes of one multipart body, made off the connection's thread (disk writes
/// block, and an event loop must not): its files queue their chunks here and the shared
/// upload writers write them. The connection stops reading while more than
/// `MultipartBodyConsumer.writeBacklog` bytes wait (TCP then slows the client), so an
/// upload holds a bounded amount of memory however fast it arrives and however slow the
/// disk is.
final class UploadWrites: Sendable {
    /// The threads that write upload files, shared by every connection: a few suffice to
    /// keep a disk busy, and a fixed count keeps the thread total bounded.
    static let writers = WorkerPool(threads: 2, name: "upload-writer")

    private struct State: Sendable {
        /// Bytes queued or being written, every file of the body together.
        var pending = 0
        var failed = false
        /// A connection that stopped reading until `pending` is at most `limit`.
        var waiter: (limit: Int, wake: @Sendable () -> Void)?
    }

    private let state = ParkingLock(State())

    init() {}

    /// Some write or close failed: the body cannot be stored (500).
    var hasFailed: Bool { state.withLock { $0.failed } }

    func queued(_ count: Int) {
        state.withLock { $0.pending += count }
    }

    /// `count` queued bytes are written (or dropped); wakes a connection waiting for the
    /// backlog to shrink once it has.
    func done(_ count: Int, failed: Bool) {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            state.pending -= count
            if failed { state.failed = true }
            guard let waiter = state.waiter, state.pending <= waiter.limit else { return nil }
            state.waiter = nil
            return waiter.wake
        }
        wake?()
    }

    /// Whether more than `limit` bytes wait to be written; if so, `wake` is called once no
    /// more than that do.
    func isBehind(limit: Int, wake: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard state.pending > limit else {
                state.waiter = nil
                return false
            }
            state.waiter = (limit, wake)
            return true
        }
    }
}
