import Dispatch

/// One descriptor watched by a `DispatchPoller`: a read source and a write source, each made
/// when first wanted, and kept suspended while the descriptor is not armed for it.
///
/// Dispatch sources are level-triggered: a readable socket nobody reads fires again and
/// again. Suspending the source once it has fired is what turns that into the poller's
/// one-shot contract, and keeps a descriptor the loop is not ready for from spinning the queue.
///
/// Every method runs under the poller's lock; the sources' handlers run on the poller's
/// queue and take that lock before they look at anything here.
final class DispatchWatch {
    let fd: Int32
    let isListener: Bool
    var token: UInt64
    /// What the owner waits for; empty once an event was reported, until the next re-arm.
    private(set) var armed: PollInterest = []
    private(set) var isRemoved = false
    private var reader: Source?
    private var writer: Source?

    /// A source and whether we suspended it: Dispatch counts suspensions, and a source
    /// released while suspended (or never resumed) crashes the process, so every suspend
    /// must be matched before the source goes.
    private struct Source {
        let source: any DispatchSourceProtocol
        var isSuspended: Bool
    }

    init(fd: Int32, token: UInt64, isListener: Bool) {
        self.fd = fd
        self.token = token
        self.isListener = isListener
    }

    /// Watches for `interest` from now on, making the sources it needs on `queue`, each
    /// calling `fired` with its direction when the descriptor is ready that way.
    func arm(_ interest: PollInterest, on queue: DispatchQueue, fired: @escaping @Sendable (PollInterest) -> Void) {
        armed = interest
        watch(.readable, if: interest.contains(.readable), with: &reader, fired: fired) {
            DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        }
        watch(.writable, if: interest.contains(.writable), with: &writer, fired: fired) {
            DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        }
    }

    private func watch(_ direction: PollInterest, if wanted: Bool, with source: inout Source?,
                       fired: @escaping @Sendable (PollInterest) -> Void, make: () -> any DispatchSourceProtocol) {
        guard wanted else { return suspend(&source) }
        if source == nil {
            let made = make()
            made.setEventHandler { fired(direction) }
            // Made inactive: the resume below is its activation.
            source = Source(source: made, isSuspended: true)
        }
        resume(&source)
    }

    /// A source fired: true (and the watch falls silent) if the owner was waiting for it.
    /// Events that were already queued when the watch fell silent are dropped here.
    func takeEvent(_ direction: PollInterest) -> Bool {
        guard !isRemoved else { return false }
        guard armed.contains(direction) else {
            if direction == .readable { suspend(&reader) } else { suspend(&writer) }
            return false
        }
        disarm()
        return true
    }

    func disarm() {
        armed = []
        suspend(&reader)
        suspend(&writer)
    }

    /// Cancels the sources; `group` is left once Dispatch has let go of the descriptor
    /// (each source's cancel handler has run), and only then may it be closed.
    func cancel(notifying group: DispatchGroup) {
        isRemoved = true
        armed = []
        for source in [reader, writer].compactMap({ $0 }) {
            group.enter()
            source.source.setCancelHandler { group.leave() }
            // Cancel first, then resume: a resumed source that is already cancelled never
            // calls its event handler again, and its cancel handler runs only once resumed.
            source.source.cancel()
            if source.isSuspended { source.source.resume() }
        }
        reader = nil
        writer = nil
    }

    private func suspend(_ source: inout Source?) {
        guard source?.isSuspended == false else { return }
        source?.source.suspend()
        source?.isSuspended = true
    }

    private func resume(_ source: inout Source?) {
        guard source?.isSuspended == true else { return }
        source?.source.resume()
        source?.isSuspended = false
    }
}
