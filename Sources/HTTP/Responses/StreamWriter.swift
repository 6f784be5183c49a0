import Locking

/// The producer's end of a response stream: a mailbox the connection drains on its event
/// loop. Writes never block and never touch the socket; the first write into an empty
/// mailbox wakes the loop, which frames what has gathered and sends it.
public final class StreamWriter: Sendable {
    public enum WriteResult: Sendable, Equatable {
        case queued
        /// This would make more than `queueLimit` bytes wait in the server (beyond what the
        /// socket took): nothing was queued; a producer writes again once `hasRoom`, or
        /// gives up on a client that stays full (`waitingBytes`). The first write into an
        /// empty queue always goes, however large, so one big event cannot wedge a stream.
        case full
        /// The stream has ended (client gone, server stopping, or finished).
        case closed
    }

    private struct Mailbox: Sendable {
        var chunks: [[UInt8]] = []
        var queuedBytes = 0
        /// Bytes the connection has taken but the kernel has not yet accepted.
        var unsentBytes = 0
        var finished = false
        var cancelled = false
        var closed = false
        /// A wake-up is on its way to the loop: no need for another.
        var wakePending = false
        var closeHandlers: [@Sendable () -> Void] = []

        /// Whether this change must wake the loop: only the first since the loop last drained.
        mutating func takeWake() -> Bool {
            defer { wakePending = true }
            return !wakePending
        }
    }

    public let queueLimit: Int
    private let mailbox = ParkingLock(Mailbox())
    private let wakeLoop: @Sendable () -> Void

    init(queueLimit: Int, wakeLoop: @escaping @Sendable () -> Void) {
        self.queueLimit = queueLimit
        self.wakeLoop = wakeLoop
    }

    /// Queues bytes to send as one chunk.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> WriteResult {
        guard !bytes.isEmpty else { return .queued }
        let (result, wake) = mailbox.withLock { box -> (WriteResult, Bool) in
            if box.closed || box.finished || box.cancelled { return (.closed, false) }
            let waiting = box.queuedBytes + box.unsentBytes
            if waiting > 0 && waiting + bytes.count > queueLimit { return (.full, false) }
            box.chunks.append(bytes)
            box.queuedBytes += bytes.count
            return (.queued, box.takeWake())
        }
        if wake { wakeLoop() }
        return result
    }

    /// Ends the stream normally once everything queued is sent.
    public func finish() {
        signal { $0.finished = true }
    }

    /// Ends the stream at once and closes the connection (a consumer over its limit).
    public func cancel() {
        signal { $0.cancelled = true }
    }

    /// Runs `handler` once, when the stream has ended for whatever reason; at once if it
    /// already has. It runs on the thread that ended the stream (the connection's loop or
    /// worker, or this caller): keep it short and non-blocking.
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        let alreadyClosed = mailbox.withLock { box -> Bool in
            if box.closed { return true }
            box.closeHandlers.append(handler)
            return false
        }
        if alreadyClosed { handler() }
    }

    public var isClosed: Bool { mailbox.withLock { $0.closed } }

    /// Bytes written and not yet taken by the client's socket.
    public var waitingBytes: Int {
        mailbox.withLock { $0.queuedBytes + $0.unsentBytes }
    }

    /// Whether a producer that met `.full` may write again: half the queue has drained.
    public var hasRoom: Bool { waitingBytes <= queueLimit / 2 }

    private func signal(_ change: (inout Mailbox) -> Void) {
        let wake = mailbox.withLock { box -> Bool in
            guard !box.closed else { return false }
            change(&box)
            return box.takeWake()
        }
        if wake { wakeLoop() }
    }

    // MARK: The connection's side (on the thread that owns the connection)

    struct Delivery {
        var chunks: [[UInt8]]
        var finished: Bool
        var cancelled: Bool
    }

    /// Takes what has been written; the next write wakes the loop again.
    func takeDelivery() -> Delivery {
        mailbox.withLock { box in
            box.wakePending = false
            defer {
                box.chunks = []
                box.queuedBytes = 0
            }
            return Delivery(chunks: box.chunks, finished: box.finished, cancelled: box.cancelled)
        }
    }

    /// What the connection still holds unsent, counted against the queue limit.
    func noteUnsent(_ bytes: Int) {
        mailbox.withLock { $0.unsentBytes = bytes }
    }

    /// The stream is over: refuses further writes and runs the close handlers.
    func markClosed() {
        let handlers = mailbox.withLock { box -> [@Sendable () -> Void] in
            guard !box.closed else { return [] }
            box.closed = true
            box.chunks = []
            defer { box.closeHandlers = [] }
            return box.closeHandlers
        }
        for handler in handlers { handler() }
    }
}
