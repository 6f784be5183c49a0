import HTTP

/// `ChangeFeed`'s record of one stream, touched by the feed's thread only (a class: fan-out
/// updates thousands of them per change in place, without copying the table that holds them).
final class ChangeSubscriber {
    let writer: StreamWriter
    /// Its viewer's blocks and mutes in it change while it is open (`refreshRelations`).
    var filter: ChangeFilter
    /// Its viewer's sets are read again once it is admitted: they came with the request,
    /// and a `relations.changed` the feed passed before the join would find no watcher.
    var newcomer = true
    /// The key of the last change it was sent or passed over.
    var cursor: ChangeKey
    var lastWrite: UInt64
    /// Its queue filled (a burst, a long replay): it is caught up from the table as its
    /// connection drains, not written to live, so a healthy reader is never cut for
    /// being handed more than its queue holds at once.
    var behind: Bool
    /// Since when its queue has been too full to take more.
    var fullSince: UInt64?
    /// A stream that started "now": what had committed then, passed over when met.
    var startedAt: ChangeSnapshot?

    init(writer: StreamWriter, filter: ChangeFilter, cursor: ChangeKey, behind: Bool, startedAt: ChangeSnapshot?) {
        self.writer = writer
        self.filter = filter
        self.cursor = cursor
        self.lastWrite = ChangeFeed.now()
        self.behind = behind
        self.startedAt = startedAt
    }

    /// Whether to pass over this change: it committed before the stream started.
    func sawBeforeStart(_ change: Change) -> Bool {
        guard let startedAt else { return false }
        if startedAt.isPassed(by: change.key) {
            self.startedAt = nil
            return false
        }
        return startedAt.sawCommitted(change.key)
    }
}
