/// When the primary was first seen at each flushed log position (only positions that
/// moved), for as long as a lag worth measuring (`ReplicaMonitor` forgets older ones).
struct PrimaryHistory {
    private var samples: [(position: LogSequenceNumber, at: ContinuousClock.Instant)] = []

    mutating func record(_ position: LogSequenceNumber, at time: ContinuousClock.Instant) {
        if let last = samples.last, last.position >= position { return }
        samples.append((position, time))
    }

    /// Drops what is older than `time`, keeping the newest sample before it (the position the
    /// primary still held then).
    mutating func forget(before time: ContinuousClock.Instant) {
        guard let keep = samples.lastIndex(where: { $0.at < time }), keep > 0 else { return }
        samples.removeFirst(keep)
    }

    /// How long ago the primary first held a position past `replayed`: zero when the replica
    /// has all the primary was last seen to have. `atLeast` when the replica lacks even the
    /// oldest position kept (or nothing was seen yet): then it is further behind than that.
    func lag(of replayed: LogSequenceNumber, now: ContinuousClock.Instant) -> (lag: Duration, atLeast: Bool) {
        guard let oldest = samples.first else { return (.zero, true) }
        if replayed < oldest.position { return (now - oldest.at, true) }
        // The first sample past `replayed` (positions only grow): a binary search.
        var low = 0, high = samples.count
        while low < high {
            let middle = (low + high) / 2
            if samples[middle].position > replayed { high = middle } else { low = middle + 1 }
        }
        return low < samples.count ? (now - samples[low].at, false) : (.zero, false)
    }
}
