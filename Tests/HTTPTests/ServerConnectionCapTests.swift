import Dispatch
import HTTP
import Locking
import Synchronization
import Testing
import TestSupport

/// `ServerConfiguration.maxConnectionsPerIP`: past it, a new connection from the same
/// address is closed at once; every way a connection ends gives its place back.
@Suite struct ServerConnectionCapTests {
    private static func start(cap: Int, trusting proxies: String = "") throws -> Server {
        try TestHTTPServer.start(configure: { configuration in
            configuration.maxConnectionsPerIP = cap
            configuration.trustedProxies = try! TrustedProxies(parsing: proxies)
        }, routes: { router in
            router.get("/ping") { _, _ in Response(body: Array("pong".utf8)) }
        })
    }

    private static func isServed(_ client: RawHTTPClient) -> Bool {
        (try? client.exchange("GET /ping HTTP/1.1\r\nHost: t\r\n\r\n").text) == "pong"
    }

    @Test func pastTheCap_aNewConnectionIsClosedAtOnce_andAClosedOneFreesItsPlace() throws {
        let server = try Self.start(cap: 3)
        defer { server.stop() }
        var open = try (0..<3).map { _ in try RawHTTPClient(port: server.port) }
        #expect(open.allSatisfy(Self.isServed))
        let refused = try RawHTTPClient(port: server.port)
        #expect(refused.waitForClose())
        #expect(server.refusedConnections == 1)

        open.removeFirst()
        #expect(eventually { server.openConnections == 2 })
        let next = try RawHTTPClient(port: server.port)
        #expect(Self.isServed(next))
        #expect(open.allSatisfy(Self.isServed))
    }

    /// The loops accept on threads of their own: however connections race in, exactly the
    /// cap is served, and once they are all gone, the whole cap again.
    @Test func underConcurrentConnects_exactlyTheCapIsServed() throws {
        let server = try TestHTTPServer.start(configure: { configuration in
            configuration.maxConnectionsPerIP = 10
            configuration.ioThreads = 4
        }, routes: { router in
            router.get("/ping") { _, _ in Response(body: Array("pong".utf8)) }
        })
        defer { server.stop() }
        for round in 0..<2 {
            do {
                // A pthread mutex (ParkingLock), not Synchronization.Mutex: on Linux Mutex waits
                // on a futex ThreadSanitizer does not see, so it took the appends for a race.
                let connected = Connected()
                DispatchQueue.concurrentPerform(iterations: 40) { _ in
                    if let client = try? RawHTTPClient(port: server.port) { connected.clients.withLock { $0.append(client) } }
                }
                let all = connected.clients.withLock { $0 }
                #expect(all.count == 40)
                #expect(all.filter(Self.isServed).count == 10, "round \(round)")
                #expect(server.refusedConnections == 30 * (round + 1))
            }
            // Every client is gone: the server must have seen them all close.
            #expect(eventually { server.openConnections == 0 })
        }
    }

    /// A connection the server closes itself (a malformed request, an idle timeout) gives
    /// its place back as surely as one the client closes.
    @Test func connectionsTheServerCloses_giveTheirPlaceBack() throws {
        let server = try TestHTTPServer.start(configure: { configuration in
            configuration.maxConnectionsPerIP = 1
            configuration.idleTimeout = .milliseconds(200)
        }, routes: { router in
            router.get("/ping") { _, _ in Response(body: Array("pong".utf8)) }
        })
        defer { server.stop() }
        let malformed = try RawHTTPClient(port: server.port)
        #expect(try malformed.exchange("GET /ping HTTP/1.1\r\n\r\n").status == 400)
        #expect(malformed.waitForClose())
        #expect(eventually { server.openConnections == 0 })

        let idle = try RawHTTPClient(port: server.port)
        #expect(Self.isServed(idle))
        #expect(idle.waitForClose())
        #expect(eventually { server.openConnections == 0 })
        #expect(Self.isServed(try RawHTTPClient(port: server.port)))
    }

    @Test func zero_turnsTheCapOff_andTrustedProxiesAreNotCounted() throws {
        for server in [try Self.start(cap: 0), try Self.start(cap: 1, trusting: "127.0.0.1")] {
            defer { server.stop() }
            let clients = try (0..<5).map { _ in try RawHTTPClient(port: server.port) }
            #expect(clients.allSatisfy(Self.isServed))
            #expect(server.refusedConnections == 0)
        }
    }
}

/// The clients that connected, from many threads at once.
private final class Connected: Sendable {
    let clients = ParkingLock<[RawHTTPClient]>([])
}
