import Dispatch
import Foundation
@testable import PostsServer
import Synchronization
import Testing

/// The coalescer alone, with a batch of the test's own that holds its statement until the
/// test lets it go: an idle write runs at once, alone; writes that arrive while every batch
/// runs wait and then run as one batch, in arrival order, one per key; each gets its own
/// outcome, and one member's failure is its own (`WriteBatches`).
@Suite struct WriteCoalescerTests {
    /// Records each batch's members; a batch whose first member is `holding` waits for `release`.
    final class Recorder: Sendable {
        let batches = Mutex<[[Int]]>([])
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holding: Int?

        init(holding: Int? = nil) {
            self.holding = holding
        }
    }

    struct Member: Sendable {
        let id: Int
        let key: Int64
        /// This member's part fails a statement it is in.
        var fails = false
    }

    final class Outcomes: Sendable {
        let byID = Mutex<[Int: Result<Int, Failure>]>([:])
    }

    struct Failure: Error, Equatable {
        let id: Int
    }

    struct Batch: WriteBatch {
        let recorder: Recorder

        static func keys(of member: Member) -> [Int64] { [member.key] }

        func run(_ members: [Member]) -> [Result<Int, any Error>] {
            recorder.batches.withLock { $0.append(members.map(\.id)) }
            if members.first?.id == recorder.holding {
                recorder.started.signal()
                recorder.release.wait()
            }
            return WriteBatches.run(members, precondition: { _ in nil }) { members in
                if let failing = members.first(where: \.fails) { throw Failure(id: failing.id) }
                return members.map { .success($0.id * 10) }
            }
        }
    }

    /// Submits each member on a thread of its own, in order, each once the one before is queued.
    private static func submitQueued(_ members: [Member], to coalescer: WriteCoalescer<Batch>, recorder: Recorder,
                                     queuedBefore: Int, outcomes: Outcomes, group: DispatchGroup) {
        for (offset, member) in members.enumerated() {
            group.enter()
            Thread {
                let outcome: Result<Int, Failure>
                do {
                    outcome = .success(try coalescer.submit(member, running: Batch(recorder: recorder)))
                } catch {
                    outcome = .failure(error as? Failure ?? Failure(id: -1))
                }
                outcomes.byID.withLock { $0[member.id] = outcome }
                group.leave()
            }.start()
            while coalescer.queued < queuedBefore + offset + 1 { usleep(100) }
        }
    }

    /// Member 1 runs first and holds its batch; `queued` arrive meanwhile and wait; then
    /// member 1's batch ends. Returns once every member has its outcome.
    private static func run(_ queued: [Member], behindAHeldBatch coalescer: WriteCoalescer<Batch>) -> (Recorder, Outcomes) {
        let recorder = Recorder(holding: 1)
        let outcomes = Outcomes()
        let group = DispatchGroup()
        submitQueued([Member(id: 1, key: 1)], to: coalescer, recorder: recorder, queuedBefore: -1, outcomes: outcomes, group: group)
        recorder.started.wait()
        submitQueued(queued, to: coalescer, recorder: recorder, queuedBefore: 0, outcomes: outcomes, group: group)
        recorder.release.signal()
        group.wait()
        return (recorder, outcomes)
    }

    @Test func anIdleWrite_runsAtOnce_alone() throws {
        let recorder = Recorder()
        let coalescer = WriteCoalescer<Batch>(maxRunning: 1)
        #expect(try coalescer.submit(Member(id: 1, key: 1), running: Batch(recorder: recorder)) == 10)
        #expect(try coalescer.submit(Member(id: 2, key: 1), running: Batch(recorder: recorder)) == 20)
        #expect(recorder.batches.withLock { $0 } == [[1], [2]])
    }

    @Test func writesArrivingWhileABatchRuns_runAsTheNextBatch_inArrivalOrder_onePerKey() {
        let coalescer = WriteCoalescer<Batch>(maxRunning: 1)
        // 5 shares 3's key.
        let (recorder, outcomes) = Self.run([Member(id: 2, key: 2), Member(id: 3, key: 3), Member(id: 4, key: 4), Member(id: 5, key: 3)],
                                            behindAHeldBatch: coalescer)
        #expect(recorder.batches.withLock { $0 } == [[1], [2, 3, 4], [5]])
        #expect(outcomes.byID.withLock { $0.mapValues { try? $0.get() } } == [1: 10, 2: 20, 3: 30, 4: 40, 5: 50])
        #expect(coalescer.counts.batches == 3 && coalescer.counts.writes == 5)
    }

    @Test func oneMembersFailure_isItsOwn() {
        let (_, outcomes) = Self.run([Member(id: 2, key: 2), Member(id: 3, key: 3, fails: true), Member(id: 4, key: 4)],
                                     behindAHeldBatch: WriteCoalescer<Batch>(maxRunning: 1))
        let got = outcomes.byID.withLock { $0 }
        #expect(got[2].flatMap { try? $0.get() } == 20 && got[4].flatMap { try? $0.get() } == 40)
        guard case .failure(let failure) = got[3] else {
            Issue.record("the failing member got \(String(describing: got[3]))")
            return
        }
        #expect(failure == Failure(id: 3))
    }

    @Test func twoBatchesRun_atOnce_whenAllowed() {
        let recorder = Recorder(holding: 1)
        let coalescer = WriteCoalescer<Batch>(maxRunning: 2)
        let outcomes = Outcomes()
        let group = DispatchGroup()
        Self.submitQueued([Member(id: 1, key: 1)], to: coalescer, recorder: recorder, queuedBefore: -1, outcomes: outcomes, group: group)
        recorder.started.wait()
        // A second batch may run beside the held one: this write does not wait for it.
        #expect((try? coalescer.submit(Member(id: 2, key: 2), running: Batch(recorder: recorder))) == 20)
        recorder.release.signal()
        group.wait()
        #expect(recorder.batches.withLock { $0 } == [[1], [2]])
    }
}
