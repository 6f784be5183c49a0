import Dispatch

/// One serial queue and the connections it owns.
///
/// The concurrency story of the server: every piece of a connection's state (socket,
/// parser, write buffer, timers) is touched only on its loop's queue, so none of it needs
/// a lock; complete requests go to the `WorkerPool`, and the worker hands the response
/// back to this queue. The classes are `@unchecked Sendable` because that confinement,
/// not the compiler, is what makes them safe.
final class IOLoop: @unchecked Sendable {
    let queue: DispatchQueue
    /// One read buffer shared by this loop's connections: reads never overlap on a serial queue.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    private var connections: [ObjectIdentifier: HTTPConnection] = [:]
    private var sweepTimer: DispatchSourceTimer?

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    deinit { readBuffer.deallocate() }

    var connectionCount: Int {
        dispatchPrecondition(condition: .onQueue(queue))
        return connections.count
    }

    func add(_ connection: HTTPConnection) {
        connections[ObjectIdentifier(connection)] = connection
        connection.start()
    }

    func remove(_ connection: HTTPConnection) {
        connections[ObjectIdentifier(connection)] = nil
    }

    /// Checks every connection's deadline at `interval`: cheaper than a timer per connection
    /// when a thousand of them sit idle.
    func startSweeping(every interval: Duration) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let nanos = Int(interval.nanoseconds)
        timer.schedule(deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(nanos),
                       leeway: .nanoseconds(nanos / 10))
        timer.setEventHandler { [self] in
            let now = DispatchTime.now().uptimeNanoseconds
            for connection in Array(connections.values) { connection.checkDeadline(now: now) }
        }
        timer.resume()
        sweepTimer = timer
    }

    /// Stops the sweep and applies `action` to every connection, on the queue.
    func forEachConnection(_ action: @escaping @Sendable (HTTPConnection) -> Void) {
        queue.async { [self] in
            for connection in Array(connections.values) { action(connection) }
        }
    }

    func stopSweeping() {
        queue.async { [self] in
            sweepTimer?.cancel()
            sweepTimer = nil
        }
    }
}
