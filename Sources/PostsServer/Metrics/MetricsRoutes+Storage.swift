/// The object store's part of `/metrics` (API.md "Storage for many instances"): this
/// instance's requests to it by operation and outcome, and their durations. Empty for a
/// folder, which is not asked over the network.
extension MetricsRoutes {
    static func addStorage(to metrics: inout MetricsText, snapshot: StorageMetrics.Snapshot) {
        metrics.describe("storage_requests_total", .counter,
                         help: "Requests to the object store, by operation and result (ok, unavailable, refused).")
        for operation in StorageMetrics.Operation.allCases {
            for outcome in StorageMetrics.Outcome.allCases {
                let count = snapshot.requests[StorageMetrics.Key(operation: operation, outcome: outcome)] ?? 0
                metrics.sample("storage_requests_total", [("op", operation.rawValue), ("result", outcome.rawValue)], Double(count))
            }
        }
        metrics.describe("storage_request_duration_seconds", .histogram, help: "Time a request to the object store took, by operation.")
        for operation in StorageMetrics.Operation.allCases {
            metrics.histogram("storage_request_duration_seconds", label: ("op", operation.rawValue),
                              snapshot.durations[operation] ?? RequestMetrics.Histogram())
        }
    }
}
