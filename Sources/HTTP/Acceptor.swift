import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Accepts connections on the listening socket and deals them out to the I/O loops in
/// turn. Confined to its own serial queue.
final class Acceptor: @unchecked Sendable {
    private let listener: Int32
    private let loops: [IOLoop]
    private let core: ServerCore
    private let queue = DispatchQueue(label: "http-accept")
    private var source: DispatchSourceRead?
    private var nextLoop = 0
    private var paused = false

    init(listener: Int32, loops: [IOLoop], core: ServerCore) {
        self.listener = listener
        self.loops = loops
        self.core = core
    }

    func start() {
        queue.sync {
            let source = DispatchSource.makeReadSource(fileDescriptor: listener, queue: queue)
            source.setEventHandler { [self] in acceptPending() }
            source.setCancelHandler { [listener] in Glibc.close(listener) }
            self.source = source
            source.resume()
        }
    }

    /// Stops accepting and closes the listening socket.
    func stop() {
        queue.sync {
            guard let source else { return }
            if paused { source.resume() }
            source.cancel()
            self.source = nil
        }
    }

    private func acceptPending() {
        while true {
            switch Socket.accept(listener) {
            case .accepted(let fd, let remoteAddress):
                let loop = loops[nextLoop]
                nextLoop = (nextLoop + 1) % loops.count
                core.connectionOpened()
                let connection = HTTPConnection(fd: fd, remoteAddress: remoteAddress, loop: loop, core: core)
                loop.queue.async { loop.add(connection) }
            case .wouldBlock:
                return
            case .failed(let error):
                // Out of descriptors (EMFILE) leaves the listener readable: pause, do not spin.
                core.logger.error("accept failed", metadata: ["error": "\(error)"])
                pause(for: .milliseconds(100))
                return
            }
        }
    }

    private func pause(for delay: DispatchTimeInterval) {
        guard let source, !paused else { return }
        source.suspend()
        paused = true
        queue.asyncAfter(deadline: .now() + delay) { [self] in
            guard paused, let source = self.source else { return }
            paused = false
            source.resume()
        }
    }
}
