import Synchronization

/// What this instance's job runner did, by kind, for `/metrics` and health: jobs done, jobs
/// skipped (nothing left to do), jobs that died here, and whether the last try failed
/// (health's `"mail":"failing"`).
final class JobStatistics: Sendable {
    struct Counters: Sendable, Equatable {
        var done = 0
        var skipped = 0
        var died = 0
        var lastTryFailed = false
    }

    private let counters = Mutex([String: Counters]())

    func record(_ outcomes: [JobOutcome], of kind: JobKind) {
        counters.withLock { counters in
            for outcome in outcomes {
                switch outcome {
                case .done:
                    counters[kind.name, default: Counters()].done += 1
                    counters[kind.name, default: Counters()].lastTryFailed = false
                case .skipped:
                    counters[kind.name, default: Counters()].skipped += 1
                case .retry, .dead:
                    counters[kind.name, default: Counters()].lastTryFailed = true
                case .untried:
                    break
                }
            }
        }
    }

    func died(_ count: Int, of kind: JobKind) {
        guard count > 0 else { return }
        counters.withLock { $0[kind.name, default: Counters()].died += count }
    }

    func counters(of kind: JobKind) -> Counters {
        counters.withLock { $0[kind.name] ?? Counters() }
    }
}
