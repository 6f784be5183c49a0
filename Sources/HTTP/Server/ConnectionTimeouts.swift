/// A connection's clock rules as pure functions of clock readings (nanoseconds of uptime),
/// so that they can be checked without sockets or waiting.
///
/// None of them restarts on a byte: a client that trickles cannot stretch a deadline.
struct ConnectionTimeouts: Sendable {
    let header: UInt64
    let idle: UInt64
    let bodyGrace: UInt64
    /// Bytes per second.
    let minimumBodyRate: UInt64
    /// How long a closing connection drains what the client still sends, so that the close
    /// does not reset the connection under an answer the client has yet to read.
    let linger: UInt64 = 2_000_000_000

    init(_ configuration: ServerConfiguration) {
        header = configuration.headerTimeout.nanoseconds
        idle = configuration.idleTimeout.nanoseconds
        bodyGrace = configuration.bodyGracePeriod.nanoseconds
        minimumBodyRate = UInt64(max(0, configuration.minimumBodyRate))
    }

    /// When a head whose first byte came at `firstByte` must be complete. A new connection's
    /// clock starts when it opens (a silent client gains nothing by sending one byte late);
    /// a kept-alive connection's when the next request begins, since it may sit idle first.
    func headDeadline(connectionOpenedAt opened: UInt64?, firstByte: UInt64) -> UInt64 {
        (opened ?? firstByte) + header
    }

    /// Whether a body that began at `start` and has delivered `received` bytes is behind the
    /// minimum rate: after the grace period, it must have averaged `minimumBodyRate` over the
    /// time since the grace ended.
    func isBodyTooSlow(start: UInt64, received: Int, now: UInt64) -> Bool {
        guard now > start + bodyGrace else { return false }
        let owed = (now - start - bodyGrace) / 1_000_000 * minimumBodyRate / 1000
        return UInt64(received) < owed
    }
}
