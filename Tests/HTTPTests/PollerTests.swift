import CLinux
import Dispatch
@testable import HTTP
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `Poller` contract, held against every poller this platform has: what the event loop
/// relies on must not depend on which one runs under it. Waits are bounded by deadlines;
/// "stays silent" means silent for a whole short poll.
@Suite struct PollerTests {
    /// Two connected sockets: the poller watches `local`, the test acts through `peer`.
    private final class SocketPair {
        let local: Int32
        var peer: Int32

        init() throws {
            var fds: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, clinux_sock_stream(), 0, &fds) == 0 else { throw SocketError("socketpair") }
            local = fds[0]
            peer = fds[1]
        }

        func sendFromPeer(_ text: String = "x") {
            _ = text.utf8CString.withUnsafeBytes { write(peer, $0.baseAddress, text.utf8.count) }
        }

        func closePeer() {
            close(peer)
            peer = -1
        }

        deinit {
            close(local)
            if peer >= 0 { close(peer) }
        }
    }

    private static let patience: Int32 = 5_000
    private static let silence: Int32 = 100

    /// The events of the first poll that has any, or none if `milliseconds` pass first.
    private static func events(of poller: any Poller, within milliseconds: Int32 = patience) -> [PollEvent] {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
        var events: [PollEvent] = []
        repeat {
            let left = Int64(deadline) - Int64(DispatchTime.now().uptimeNanoseconds)
            _ = poller.poll(timeoutMilliseconds: Int32(max(0, left / 1_000_000))) { events.append($0) }
        } while events.isEmpty && DispatchTime.now().uptimeNanoseconds < deadline
        return events
    }

    @Test(arguments: PollerKind.available)
    func readable_isReportedOnce_untilRearmed(_ kind: PollerKind) throws {
        let poller = try kind.makePoller(label: "test")
        let pair = try SocketPair()
        try poller.add(pair.local, token: 7, interest: .readable)
        pair.sendFromPeer()
        let first = Self.events(of: poller)
        #expect(first.map(\.token) == [7])
        #expect(first.first?.readable == true)
        // Unread, so still readable: one-shot keeps it quiet all the same.
        #expect(Self.events(of: poller, within: Self.silence).isEmpty)
        #expect(poller.rearm(pair.local, token: 8, interest: .readable))
        #expect(Self.events(of: poller).map(\.token) == [8])
        poller.remove(pair.local)
    }

    @Test(arguments: PollerKind.available)
    func rearm_changesWhatItWaitsFor(_ kind: PollerKind) throws {
        let poller = try kind.makePoller(label: "test")
        let pair = try SocketPair()
        try poller.add(pair.local, token: 1, interest: .readable)
        #expect(Self.events(of: poller, within: Self.silence).isEmpty)
        #expect(poller.rearm(pair.local, token: 1, interest: .writable))
        let events = Self.events(of: poller)
        #expect(events.count == 1)
        #expect(events.first?.writable == true)
        #expect(events.first?.readable == false)
        poller.remove(pair.local)
    }

    @Test(arguments: PollerKind.available)
    func wake_endsAWaitingPoll_andIsKeptUntilOneTakesIt(_ kind: PollerKind) throws {
        let poller = try kind.makePoller(label: "test")
        #expect(poller.poll(timeoutMilliseconds: 10) { _ in } == false)
        DispatchQueue.global().async { poller.wake() }
        let start = DispatchTime.now().uptimeNanoseconds
        var woken = false
        while !woken && DispatchTime.now().uptimeNanoseconds - start < 10_000_000_000 {
            woken = poller.poll(timeoutMilliseconds: 10_000) { _ in }
        }
        #expect(woken)
        #expect(DispatchTime.now().uptimeNanoseconds - start < 5_000_000_000)
        poller.wake()
        #expect(poller.poll(timeoutMilliseconds: 10_000) { _ in })
        #expect(poller.poll(timeoutMilliseconds: 10) { _ in } == false)
    }

    /// What a connection's close does: remove, then close at once; a new socket that gets the
    /// same number is a new registration and hears nothing meant for the old one.
    @Test(arguments: PollerKind.available)
    func removeThenClose_leavesNoTraceForTheNextSocketWithThatNumber(_ kind: PollerKind) throws {
        let poller = try kind.makePoller(label: "test")
        var old: SocketPair? = try SocketPair()
        let number = old!.local
        try poller.add(number, token: 1, interest: .readable)
        old!.sendFromPeer()
        poller.remove(number)
        #expect(!poller.rearm(number, token: 1, interest: .readable))
        old = nil
        let new = try SocketPair()
        try poller.add(new.local, token: 2, interest: .readable)
        #expect(Self.events(of: poller, within: Self.silence).isEmpty)
        new.sendFromPeer()
        #expect(Self.events(of: poller).map(\.token) == [2])
        poller.remove(new.local)
    }

    @Test(arguments: PollerKind.available)
    func hangUp_isReported_andTheReadSaysSo(_ kind: PollerKind) throws {
        let poller = try kind.makePoller(label: "test")
        let pair = try SocketPair()
        try poller.add(pair.local, token: 3, interest: .readable)
        pair.closePeer()
        let events = Self.events(of: poller)
        #expect(events.count == 1)
        #expect(events.first.map { $0.readable || $0.hangUp } == true)
        var byte: UInt8 = 0
        #expect(read(pair.local, &byte, 1) == 0)
        poller.remove(pair.local)
    }

    /// Listeners are not one-shot: each new connection is reported without a re-arm, by
    /// every loop's poller that watches the listener (one of them accepts it).
    @Test(arguments: PollerKind.available)
    func listener_reportsEachNewConnection_withoutRearm(_ kind: PollerKind) throws {
        let pollers = try (0..<2).map { _ in try kind.makePoller(label: "test") }
        let (listener, port) = try Socket.listen(host: "127.0.0.1", port: 0)
        defer { Socket.close(listener) }
        for poller in pollers { try poller.addListener(listener, token: 99) }
        for _ in 0..<3 {
            let client = try RawHTTPClient(port: port)
            var accepted = false
            let deadline = DispatchTime.now().uptimeNanoseconds + 5_000_000_000
            while !accepted && DispatchTime.now().uptimeNanoseconds < deadline {
                for poller in pollers {
                    _ = poller.poll(timeoutMilliseconds: 10) { event in
                        #expect(event.token == 99)
                        if case .accepted(let fd, _) = Socket.accept(listener) {
                            Socket.close(fd)
                            accepted = true
                        }
                    }
                }
            }
            #expect(accepted)
            _ = client
        }
        for poller in pollers { poller.removeListener(listener) }
    }
}
