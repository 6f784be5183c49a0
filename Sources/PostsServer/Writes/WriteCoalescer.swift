import Dispatch
import Locking
import Synchronization

/// Group commit, one level up from the database's: concurrent writes of one kind (likes,
/// comment creates, follows) run as one statement over the whole batch, each request still
/// with its own answer or refusal (`WriteBatch`).
///
/// No timer and no window: a write that finds fewer than `maxRunning` batches of its kind
/// running runs at once, alone, on its own thread (an idle server never waits). One that
/// finds them all running waits in the queue; when a batch ends, its leader hands the lead
/// to the first write waiting, which takes every write queued by then (up to `maxBatch`) as
/// the next batch. So a write waits at most for the statements already running, and the
/// busier the server, the larger the batches.
///
/// A batch holds at most one write per key (`WriteBatch.keys`: a post's likes, a follow's
/// two profiles), so its statement never meets the same row twice; a later write of the
/// same key waits for a later batch. (Writes about the same state that are in flight at
/// once were never ordered: each commits when it holds that state's lock, and its change
/// says so, as before batches.)
final class WriteCoalescer<Batch: WriteBatch>: Sendable {
    typealias Member = Batch.Member
    typealias Outcome = Batch.Outcome

    /// One write's place: its member, then its outcome, or the lead handed to it.
    private final class Slot: Sendable {
        let member: Member
        let keys: [Int64]
        let woken = DispatchSemaphore(value: 0)
        /// Written once, by the leader that ran it, before `woken` is signalled.
        let outcome = Mutex<Result<Outcome, any Error>?>(nil)

        init(_ member: Member, keys: [Int64]) {
            self.member = member
            self.keys = keys
        }
    }

    private struct State {
        var queue: [Slot] = []
        var running = 0
    }

    private let state = ParkingLock(State())
    let maxRunning: Int
    let maxBatch: Int
    private let statistics = Statistics()

    init(maxRunning: Int, maxBatch: Int = 64) {
        self.maxRunning = max(1, maxRunning)
        self.maxBatch = max(1, maxBatch)
    }

    /// `member`'s outcome, run in a batch with whatever writes of its kind wait with it.
    /// `batch`: how this request's thread runs a batch if the lead falls to it (its own
    /// database session, whose pool lends the connection).
    func submit(_ member: Member, running batch: Batch) throws -> Outcome {
        let slot = Slot(member, keys: Batch.keys(of: member))
        let leads: Bool = state.withLock { state in
            state.queue.append(slot)
            guard state.running < maxRunning else { return false }
            state.running += 1
            return true
        }
        if !leads {
            slot.woken.wait()
            // Woken with its outcome (a leader ran it), or with the lead (none set).
            if let outcome = slot.outcome.withLock({ $0 }) { return try outcome.get() }
        }
        lead(from: slot, running: batch)
        guard let outcome = slot.outcome.withLock({ $0 }) else {
            preconditionFailure("a leader's batch always holds its own write")
        }
        return try outcome.get()
    }

    /// Runs one batch, its own write first, then hands the lead on (or gives its turn up).
    private func lead(from own: Slot, running batch: Batch) {
        let slots: [Slot] = state.withLock { state in
            var taken = [own]
            var keys = Set(own.keys)
            var left: [Slot] = []
            for slot in state.queue where slot !== own {
                if taken.count < maxBatch && keys.isDisjoint(with: slot.keys) {
                    taken.append(slot)
                    keys.formUnion(slot.keys)
                } else {
                    left.append(slot)
                }
            }
            state.queue = left
            return taken
        }
        statistics.record(batchOf: slots.count)
        let outcomes = batch.run(slots.map(\.member))
        for (slot, outcome) in zip(slots, outcomes) {
            slot.outcome.withLock { $0 = outcome }
        }
        // The next leader first (it has queued longest; out of the queue, so that no other
        // leader hands it the lead too), then the members' answers.
        let next: Slot? = state.withLock { state in
            guard !state.queue.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.queue.removeFirst()
        }
        next?.woken.signal()
        for slot in slots where slot !== own { slot.woken.signal() }
    }

    /// Writes waiting for a leader (tests wait on it to know a batch has formed).
    var queued: Int { state.withLock { $0.queue.count } }

    /// Batches run and writes in them, for `/metrics`.
    var counts: (batches: Int, writes: Int) { statistics.counts }

    private final class Statistics: Sendable {
        private let batches = Atomic<Int>(0)
        private let writes = Atomic<Int>(0)

        func record(batchOf size: Int) {
            batches.add(1, ordering: .relaxed)
            writes.add(size, ordering: .relaxed)
        }

        var counts: (batches: Int, writes: Int) {
            (batches.load(ordering: .relaxed), writes.load(ordering: .relaxed))
        }
    }
}

/// A kind of write that can run as a batch: how a batch of its members runs as one
/// statement, with one outcome per member in their order.
protocol WriteBatch: Sendable {
    associatedtype Member: Sendable
    associatedtype Outcome: Sendable

    /// What a member's write is about (a post, two profiles): a batch holds one write per key.
    static func keys(of member: Member) -> [Int64]

    /// One outcome per member, in their order. A failure of one member's part must not fail
    /// the others' (run them again one by one when the batch's statement fails as a whole).
    func run(_ members: [Member]) -> [Result<Outcome, any Error>]
}
