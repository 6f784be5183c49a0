import Dispatch
import Foundation
import Locking

/// A fixed set of threads that run request handlers. Handlers block (libpq is
/// synchronous), so they must not run on the event loops, and a fixed count keeps the
/// thread total bounded whatever the load — unlike blocking work on Dispatch's global
/// queues, which makes libdispatch spawn threads until its limit.
final class WorkerPool: Sendable {
    /// Called with how long the job waited in the queue, in nanoseconds.
    typealias Job = @Sendable (_ waited: UInt64) -> Void

    private struct Queued {
        let job: Job
        let enqueuedAt: UInt64
    }

    private struct Queue {
        var jobs = RingBuffer<Queued>()
        var stopping = false
    }

    private let queue = ParkingLock(Queue())
    private let ready = DispatchSemaphore(value: 0)
    private let finished = DispatchGroup()
    let threadCount: Int

    init(threads: Int, name: String) {
        threadCount = max(1, threads)
        for index in 0..<threadCount {
            finished.enter()
            let threadName = "\(name)-\(index)"
            let thread = Thread { [self] in
                ThreadName.set(threadName)
                runJobs()
                finished.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    func submit(_ job: @escaping Job) {
        let queued = Queued(job: job, enqueuedAt: DispatchTime.now().uptimeNanoseconds)
        queue.withLock { $0.jobs.append(queued) }
        ready.signal()
    }

    /// Jobs submitted that no thread has taken yet.
    var waitingJobs: Int { queue.withLock { $0.jobs.count } }

    /// Lets queued jobs finish, then ends the threads.
    func stop() {
        queue.withLock { $0.stopping = true }
        for _ in 0..<threadCount { ready.signal() }
        finished.wait()
    }

    private func runJobs() {
        while true {
            ready.wait()
            let next: Queued?? = queue.withLock { state in
                if let queued = state.jobs.popFirst() { return .some(queued) }
                return state.stopping ? .none : .some(nil)
            }
            guard let queued = next else { return }
            if let queued { queued.job(DispatchTime.now().uptimeNanoseconds &- queued.enqueuedAt) }
        }
    }
}
