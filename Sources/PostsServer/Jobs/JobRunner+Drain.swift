import Foundation

/// Waiting for the runner without sleeping: `pause` and `hold` wait for its batches to end,
/// and a test (or a command that must not leave work behind) `drain`s it, on the
/// dispatcher's rounds and the batches' ends rather than by looking at the jobs table every
/// few milliseconds.
extension JobRunner {
    /// Runs the jobs of `kinds` (by default every kind this runner runs and does not hold)
    /// that are due now, and what they queue in turn, and returns true once none of them is
    /// due or being tried, here or on another instance; false when that is not so within
    /// `timeout`, or when the runner is stopped or paused. A job waiting out its backoff is
    /// not due, nor is a recurring job between its runs: advance the clock to have it run.
    func drain(_ kinds: [JobKind]? = nil, timeout: Duration = .seconds(60)) throws -> Bool {
        let held = state.withLock { $0.held }
        let kinds = kinds ?? self.kinds.filter { !held.contains($0.name) }
        precondition(Set(kinds).isSubset(of: Set(self.kinds)), "a runner drains only the kinds it runs")
        let deadline = Date(timeIntervalSinceNow: Double(timeout.milliseconds) / 1000)
        var lookNow = true
        while isRunning && !state.withLock({ $0.paused }) {
            let (asked, claimed) = state.withLock { ($0.roundsBegun, $0.batchesClaimed) }
            if lookNow { wake() }
            // A round begun after the question has ended, and whatever it claimed has run.
            guard waitUntil(deadline, { $0.roundsEnded > asked && $0.isIdle }) else { return false }
            let left = try queue.unfinished(kinds)
            if left.due == 0 && left.running == 0 { return true }
            // More came due (a batch queued it, or a full batch left some): look again at
            // once. Due but not taken (its kind cannot run here), or held by another runner:
            // the next round is the next poll or the end of a batch, not a spin.
            lookNow = left.due > 0 && state.withLock { $0.batchesClaimed > claimed }
        }
        return false
    }

    /// Stops claiming jobs of `kinds` on this instance and waits (10 s at most) for their
    /// batches in flight to finish; the other kinds go on. For a test that runs a recurring
    /// kind's round itself (a pruner's) and must not have the job's round race it for the
    /// same rows; `release` lets them be claimed again.
    func hold(_ kinds: [JobKind]) {
        let names = Set(kinds.map(\.name))
        state.withLock { $0.held.formUnion(names) }
        // A kind's batches in flight: claimed (or being claimed), waiting or running.
        _ = waitUntil(Date(timeIntervalSinceNow: 10)) { state in names.allSatisfy { state.inFlight[$0, default: 0] == 0 } }
    }

    func release(_ kinds: [JobKind]) {
        state.withLock { $0.held.subtract(kinds.map(\.name)) }
        wake()
    }

    /// Waits until `condition` holds of the state, or `deadline` passes (false then, unless
    /// it holds by then). Woken by `settle`.
    func waitUntil(_ deadline: Date, _ condition: (State) -> Bool) -> Bool {
        settled.lock()
        defer { settled.unlock() }
        while !state.withLock({ condition($0) }) {
            guard settled.wait(until: deadline) else { return state.withLock { condition($0) } }
        }
        return true
    }

    /// Wakes `waitUntil`'s waiters to look again. Called after the state changed (and its lock
    /// was let go): a waiter holds `settled` from its look until it waits, so none misses it.
    func settle() {
        settled.lock()
        settled.broadcast()
        settled.unlock()
    }
}
