import Dispatch
import Foundation
import HTTP
import Locking
import Logging
import Postgres
import Synchronization

/// An instance's live feed: one dedicated connection (not from the pool) that reads the
/// new changes every `pollInterval` (20 ms: one index probe), once for all (below the
/// horizon, see `ChangeLog`), and hands each to every matching subscriber of this instance.
/// Writers do not NOTIFY (its commit-time lock cost a quarter of write throughput, see the
/// migration); a write on this instance nudges it (`ChangeNudge`), and the connection
/// LISTENs, so a NOTIFY on the channel wakes it early too. After
/// an outage it reconnects and catches up from the table from where it was: nothing is
/// missed.
///
/// One thread does it all: subscribers, cursors and the connection belong to it; other
/// threads reach it through the inbox (joins and leaves).
final class ChangeFeed: @unchecked Sendable {
    struct Statistics: Sendable {
        let subscribers: Int
        let delivered: Int
        /// How far delivery is behind the writes: the age of the oldest committed change
        /// still held back (a long transaction elsewhere holds the horizon), or else how
        /// long the changes delivered in the last second took to go out.
        let lagSeconds: Double
    }

    /// How long a subscriber's queue (1 MiB) may stay full before it counts as stalled.
    private static let stallLimit: UInt64 = 3_000_000_000

    private struct Inbox: Sendable {
        var joins: [(Int, StreamWriter, ChangeFilter, ChangeKey, ChangeSnapshot?)] = []
        var leaves: [Int] = []
        /// Every stream open now is to end (a restored snapshot: their cursors are gone).
        var endAll = false
    }

    private let conninfo: String
    private let logger: Logger
    private let pollInterval: Duration
    private let nudge: ChangeNudge
    /// What a change's age (the lag in /metrics) is measured by: the clock its `at` is of.
    private let clock: ServerClock
    /// Nudges come with every local write: reads follow one another at least this far
    /// apart, so a burst of writes goes out in batches (one send per subscriber for
    /// several events). Measured: 2 ms gave 183k events/s at 1,000 subscribers, 5 ms
    /// 223k, polling alone 360k; local delivery p99 stayed ~20 ms with either gap.
    private static let minimumReadGap: UInt64 = 5_000_000
    private let keepAliveInterval: UInt64
    private let inbox = ParkingLock(Inbox())
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let nextID = Atomic<Int>(0)
    private let subscriberCount = Atomic<Int>(0)
    private let deliveredCount = Atomic<Int>(0)
    private let lagMilliseconds = Atomic<Int>(0)

    // The feed thread's own.
    private var connection: PostgresConnection?
    private var cursor = ChangeKey(txid: 0, position: 0)
    private var hasPosition = false
    private var subscribers: [Int: ChangeSubscriber] = [:]
    private var lastSweep: UInt64 = 0
    /// The longest a change delivered since the last sweep took from its write, in ms.
    private var deliveryLag = 0
    private var outageLogged = false
    /// A subscriber caught up a page and has more to catch up and room: no pause next round.
    private var catchUpPending = false
    private var lastRead: UInt64 = 0

    static let channel = "posts_server_changes"
    static let keepAlive = Array(": keep-alive\n\n".utf8)

    init(conninfo: String, logger: Logger, nudge: ChangeNudge, clock: ServerClock, pollInterval: Duration = .milliseconds(20),
         keepAliveInterval: Duration = .seconds(15)) {
        self.conninfo = conninfo
        self.logger = logger
        self.nudge = nudge
        self.clock = clock
        self.pollInterval = pollInterval
        self.keepAliveInterval = UInt64(keepAliveInterval.components.seconds) * 1_000_000_000
            + UInt64(keepAliveInterval.components.attoseconds / 1_000_000_000)
    }

    var statistics: Statistics {
        Statistics(subscribers: subscriberCount.load(ordering: .relaxed), delivered: deliveredCount.load(ordering: .relaxed),
                   lagSeconds: Double(lagMilliseconds.load(ordering: .relaxed)) / 1000)
    }

    /// Starts at the position current when it first reaches the database: changes
    /// committed from then on are delivered.
    func start() {
        running.store(true, ordering: .releasing)
        let thread = Thread { [self] in
            while running.load(ordering: .acquiring) { step() }
            connection?.close()
            finished.signal()
        }
        thread.name = "change-feed"
        thread.start()
    }

    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        _ = finished.wait(timeout: .now() + 5)
    }

    /// Adds a subscriber whose stream continues after `since`: what committed in between is
    /// replayed from the table first, then it is live, with no gap and no duplicate.
    func subscribe(_ writer: StreamWriter, filter: ChangeFilter, since: ChangeKey) {
        join(writer, filter: filter, since: since, startedAt: nil)
    }

    /// Adds a subscriber that gets exactly the changes that commit after `snapshot`.
    func subscribe(_ writer: StreamWriter, filter: ChangeFilter, after snapshot: ChangeSnapshot) {
        join(writer, filter: filter, since: snapshot.start, startedAt: snapshot)
    }

    /// Ends every stream open now (their clients reconnect, and learn their cursors are gone).
    func endAllStreams() {
        inbox.withLock { $0.endAll = true }
    }

    private func join(_ writer: StreamWriter, filter: ChangeFilter, since: ChangeKey, startedAt: ChangeSnapshot?) {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        writer.onClose { [self] in inbox.withLock { $0.leaves.append(id) } }
        inbox.withLock { $0.joins.append((id, writer, filter, since, startedAt)) }
        subscriberCount.add(1, ordering: .relaxed)
    }

    // MARK: The feed thread

    /// One round: joins and leaves, new changes for everyone, then one page for each
    /// subscriber that is catching up (in turns, so that no replay, however long, holds
    /// back the others), keep-alives. While the database is away, joins, leaves and
    /// keep-alives go on; the streams wait for their changes.
    private func step() {
        admit()
        nudge.listening.store(!subscribers.isEmpty, ordering: .relaxed)
        do {
            let connection = try connected()
            try refreshNewcomers(on: connection)
            _ = try connection.awaitNotifications(timeout: catchUpPending ? .zero : pollInterval, orReadable: nudge.descriptor)
            nudge.take()
            let sinceRead = Self.now() - lastRead
            if sinceRead < Self.minimumReadGap { usleep(UInt32((Self.minimumReadGap - sinceRead) / 1000)) }
            lastRead = Self.now()
            try deliverNew(on: connection)
            try catchUpInTurns(on: connection)
            try everySecond(on: connection)
        } catch {
            if !outageLogged {
                logger.warning("change feed lost its database connection; reconnecting", metadata: ["error": "\(error)"])
                outageLogged = true
            }
            connection?.close()
            connection = nil
            sendKeepAlives(now: Self.now())
            usleep(200_000)
        }
    }

    private func connected() throws -> PostgresConnection {
        if let connection { return connection }
        let fresh = try PostgresConnection(conninfo: conninfo, connectTimeout: .seconds(2))
        // So that an operator looking at pg_stat_activity knows what this session is.
        _ = try fresh.query("SET application_name = 'posts-server change feed'")
        try fresh.listen(unsafeChannel: Self.channel)
        if !hasPosition {
            cursor = try ChangeReader.currentPosition(on: fresh)
            hasPosition = true
        }
        connection = fresh
        if outageLogged {
            logger.info("change feed reconnected; catching up")
            outageLogged = false
        }
        return fresh
    }

    /// Joins and leaves. A joiner starts behind when something committed between its start
    /// and where the feed is now: it is caught up from the table, then live.
    private func admit() {
        let pending = inbox.withLock { box -> Inbox in
            defer { box = Inbox() }
            return box
        }
        for (id, writer, filter, since, startedAt) in pending.joins {
            subscribers[id] = ChangeSubscriber(writer: writer, filter: filter, cursor: since, behind: since < cursor,
                                         startedAt: startedAt)
        }
        // After the joins: a stream that joined before the call (its client already has its
        // head) is open, and ends too. (One that joined just after it ends as well: its
        // client reconnects, which costs nothing but a request.)
        if pending.endAll {
            for (id, subscriber) in subscribers {
                subscriber.writer.cancel()
                drop(id)
            }
        }
        for id in pending.leaves { drop(id) }
    }

    /// Reads what is new since the feed's cursor, once, and fans it out. With nobody to
    /// hand it to, it only moves up to the horizon: the rows are not read at all.
    private func deliverNew(on connection: PostgresConnection) throws {
        if subscribers.isEmpty {
            cursor = max(cursor, try ChangeReader.currentPosition(on: connection))
            return
        }
        while true {
            let page = try ChangeReader.page(after: cursor, through: nil, filter: .everything, limit: 1000, on: connection)
            for change in page.changes {
                if change.type == ChangeRows.relationsChanged, let user = change.recipientID {
                    try refreshRelations(of: user, on: connection)
                }
                fanOut(change)
            }
            cursor = max(cursor, page.next)
            if let last = page.changes.last { recordLag(last) }
            if !page.hasMore { break }
        }
    }

    /// A user's blocks or mutes changed (a `relations.changed` of theirs, met in key order):
    /// their open streams filter by the sets as they are now from this change on, so a block
    /// or mute made while a stream is open applies to it (API.md "Safety").
    private func refreshRelations(of user: Int64, on connection: PostgresConnection) throws {
        let watching = subscribers.values.filter { $0.filter.viewer == user }
        guard !watching.isEmpty else { return }
        let relations = try Relations.read(of: user, on: connection)
        for subscriber in watching { subscriber.filter.seeing(relations) }
    }

    /// The sets of each newly admitted stream's viewer, as they are now.
    private func refreshNewcomers(on connection: PostgresConnection) throws {
        for subscriber in subscribers.values where subscriber.newcomer {
            if let viewer = subscriber.filter.viewer { subscriber.filter.seeing(try Relations.read(of: viewer, on: connection)) }
            subscriber.newcomer = false
        }
    }

    /// One page for each subscriber that is behind and has room again; one whose queue has
    /// stayed full is cut off (it resumes with Last-Event-ID) and never slows anyone else.
    private func catchUpInTurns(on connection: PostgresConnection) throws {
        catchUpPending = false
        let now = Self.now()
        for (id, subscriber) in subscribers where subscriber.behind {
            if subscriber.writer.hasRoom {
                subscriber.fullSince = nil
                try catchUp(id, subscriber, on: connection)
                catchUpPending = catchUpPending || (subscriber.behind && subscriber.writer.hasRoom)
            } else if let since = subscriber.fullSince {
                if now >= since + Self.stallLimit {
                    subscriber.writer.cancel()
                    drop(id)
                }
            } else {
                subscriber.fullSince = now
            }
        }
    }

    private func fanOut(_ change: Change) {
        let event = change.event
        var gone: [Int] = []
        for (id, subscriber) in subscribers where !subscriber.behind && change.key > subscriber.cursor {
            if subscriber.filter.matches(change) && !subscriber.sawBeforeStart(change) {
                switch send(event, to: subscriber) {
                case .sent: break
                // Not this one now: it stays before this change and catches up later.
                case .full:
                    subscriber.behind = true
                    continue
                case .gone:
                    gone.append(id)
                    continue
                }
            }
            subscriber.cursor = change.key
        }
        for id in gone { drop(id) }
    }

    /// The next page of a lagging subscriber's changes, from the table, up to the feed;
    /// cut off (to resume and be told 410) if pruning has passed it meanwhile. One query:
    /// the page brings the retention mark its rows were read under, compared here in
    /// memory, so a lagging subscriber costs no second query per round.
    private func catchUp(_ id: Int, _ subscriber: ChangeSubscriber, on connection: PostgresConnection) throws {
        let page = try ChangeReader.page(after: subscriber.cursor, through: cursor, filter: subscriber.filter,
                                         limit: Self.catchUpPage, on: connection)
        if !page.retention.keeps(subscriber.cursor) {
            subscriber.writer.cancel()
            return drop(id)
        }
        for change in page.changes {
            if subscriber.sawBeforeStart(change) {
                subscriber.cursor = change.key
                continue
            }
            switch send(change.event, to: subscriber) {
            case .sent: subscriber.cursor = change.key
            case .full: return
            case .gone: return drop(id)
            }
        }
        subscriber.cursor = max(subscriber.cursor, page.next)
        subscriber.behind = subscriber.cursor < cursor
    }

    private static let catchUpPage = 100

    private enum Sent {
        case sent
        case full
        case gone
    }

    /// `.gone` when the subscriber left, or is so far behind that it is cut off (it resumes
    /// with Last-Event-ID); a slow one never slows anyone else.
    private func send(_ bytes: [UInt8], to subscriber: ChangeSubscriber, isEvent: Bool = true) -> Sent {
        // Counted before the write: once queued, the loop may put it on the wire (and its
        // reader look at /metrics) before this thread goes on.
        if isEvent { deliveredCount.add(1, ordering: .relaxed) }
        switch subscriber.writer.write(bytes) {
        case .queued:
            subscriber.lastWrite = Self.now()
            return .sent
        case .full:
            if isEvent { deliveredCount.subtract(1, ordering: .relaxed) }
            return .full
        case .closed:
            if isEvent { deliveredCount.subtract(1, ordering: .relaxed) }
            return .gone
        }
    }

    private func drop(_ id: Int) {
        if subscribers.removeValue(forKey: id) != nil { subscriberCount.subtract(1, ordering: .relaxed) }
    }

    private func everySecond(on connection: PostgresConnection) throws {
        let now = Self.now()
        guard now >= lastSweep + 1_000_000_000 else { return }
        lastSweep = now
        sendKeepAlives(now: now)
        let heldBack = try ChangeReader.heldBackAge(after: cursor, clock: clock, on: connection)
        lagMilliseconds.store(max(heldBack, deliveryLag), ordering: .relaxed)
        deliveryLag = 0
    }

    private func sendKeepAlives(now: UInt64) {
        var gone: [Int] = []
        for (id, subscriber) in subscribers where now >= subscriber.lastWrite + keepAliveInterval {
            if send(Self.keepAlive, to: subscriber, isEvent: false) == .gone { gone.append(id) }
        }
        for id in gone { drop(id) }
    }

    /// How long after it was written the newest change went out.
    private func recordLag(_ change: Change) {
        deliveryLag = max(deliveryLag, Int(clock.millisecondsSince1970 - change.at.millisecondsSince1970))
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
