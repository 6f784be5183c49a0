/// Which transactions had committed at one moment: a PostgreSQL snapshot (`xmin:xmax:xip`).
/// A stream that starts "now" begins below the horizon (`start`), where changes committed
/// just before may still lie when an older transaction holds the horizon back; it passes
/// over those, so that it delivers exactly the changes committed after it started.
struct ChangeSnapshot: Sendable {
    let xmin: Int64
    let xmax: Int64
    let inProgress: Set<Int64>

    /// Parses `pg_current_snapshot()::text`.
    init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let xmin = Int64(parts[0]), let xmax = Int64(parts[1]) else { return nil }
        var inProgress: Set<Int64> = []
        for id in parts[2].split(separator: ",") {
            guard let value = Int64(id) else { return nil }
            inProgress.insert(value)
        }
        self.xmin = xmin
        self.xmax = xmax
        self.inProgress = inProgress
    }

    var start: ChangeKey { .below(horizon: xmin) }

    /// Whether the change's transaction had committed when the snapshot was taken.
    func sawCommitted(_ key: ChangeKey) -> Bool {
        key.txid < xmin || (key.txid < xmax && !inProgress.contains(key.txid))
    }

    /// Whether a stream at `cursor` can meet no change this snapshot saw any more.
    func isPassed(by cursor: ChangeKey) -> Bool { cursor.txid >= xmax }
}
