import HTTP
import Testing
import TestSupport

/// `ServerConfiguration.trustedProxies` over real sockets: the test client, on 127.0.0.1,
/// plays the load balancer (or, untrusted, a client that writes the header itself).
@Suite struct ServerForwardedForTests {
    /// `/whoami` answers the request's client address; `/in` its admission's (decided from
    /// the head before the body is read); `/big` takes bodies of up to 1 MiB.
    private static func start(trusting proxies: String, accessLog: RecordingAccessLog = RecordingAccessLog(),
                              configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> Server {
        let admission = Admission { _, remoteAddress in remoteAddress }
        return try TestHTTPServer.start(accessLog: accessLog, configure: { configuration in
            configuration.trustedProxies = try! TrustedProxies(parsing: proxies)
            configure(&configuration)
        }, routes: { router in
            router.get("/whoami") { _, context in Response(body: Array(context.remoteAddress.utf8)) }
            router.post("/in", body: .collect(limit: 1024), admission: admission) { _, context in
                Response(body: Array("\(context.admitted as? String ?? "-")".utf8))
            }
            router.post("/big", bodyLimit: 1 << 20) { request, _ in Response(body: Array("\(request.body.count)".utf8)) }
        })
    }

    @Test func fromAnUntrustedPeer_aForwardedForChangesNothing() throws {
        let log = RecordingAccessLog()
        let server = try Self.start(trusting: "10.0.0.0/8, ::1", accessLog: log)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.exchange("GET /whoami HTTP/1.1\r\nHost: t\r\nX-Request-Id: spoof-1\r\n"
            + "X-Forwarded-For: 198.51.100.1\r\n\r\n")
        #expect(response.text == "127.0.0.1")
        #expect(log.entry(requestID: "spoof-1")?.client == "127.0.0.1")
    }

    @Test func fromATrustedPeer_theForwardedClientIsWhatEveryoneSees() throws {
        let log = RecordingAccessLog()
        let server = try Self.start(trusting: "127.0.0.1/32", accessLog: log)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let whoami = try client.exchange("GET /whoami HTTP/1.1\r\nHost: t\r\nX-Request-Id: fwd-1\r\n"
            + "X-Forwarded-For: 6.6.6.6, 198.51.100.1\r\n\r\n")
        #expect(whoami.text == "198.51.100.1")
        #expect(log.entry(requestID: "fwd-1")?.client == "198.51.100.1")

        // Admission, before the body is read (the head goes alone).
        try client.send("POST /in HTTP/1.1\r\nHost: t\r\nX-Forwarded-For: 2001:db8::7\r\nContent-Length: 2\r\n\r\n")
        try client.send("hi")
        #expect(try client.readResponse().text == "2001:db8::7")

        // A request refused before any handler ran is logged under its client too.
        let refused = try client.exchange("POST /in HTTP/1.1\r\nHost: t\r\nX-Request-Id: fwd-3\r\n"
            + "X-Forwarded-For: 198.51.100.2\r\nContent-Length: 5000\r\n\r\n")
        #expect(refused.status == 413)
        #expect(log.entry(requestID: "fwd-3")?.client == "198.51.100.2")
    }

    @Test func withoutTheHeader_theTrustedPeerIsTheClient() throws {
        let server = try Self.start(trusting: "127.0.0.0/8")
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        #expect(try client.exchange("GET /whoami HTTP/1.1\r\nHost: t\r\n\r\n").text == "127.0.0.1")
        #expect(try client.exchange("GET /whoami HTTP/1.1\r\nHost: t\r\nX-Forwarded-For: unknown\r\n\r\n").text == "127.0.0.1")
    }

    /// One client may hold a quarter of the body budget: behind the balancer that is each
    /// forwarded client's quarter, not one quarter for everybody.
    @Test func theBodyBudgetsShare_isTheForwardedClients() throws {
        let server = try Self.start(trusting: "127.0.0.1") { $0.maxBodyMemory = 4 << 20 }
        defer { server.stop() }
        let length = 600_000
        func startUpload(from client: String) throws -> RawHTTPClient {
            let connection = try RawHTTPClient(port: server.port)
            try connection.send("POST /big HTTP/1.1\r\nHost: t\r\nX-Forwarded-For: \(client)\r\nContent-Length: \(length)\r\n\r\nab")
            return connection
        }
        let first = try startUpload(from: "198.51.100.1")
        #expect(eventually { server.bodyMemoryInUse == length })
        // Past 198.51.100.1's share (1 MiB): its second body waits aside.
        let second = try startUpload(from: "198.51.100.1")
        #expect(eventually { server.bodiesWaitingForMemory == 1 })
        // Another forwarded client has a share of its own.
        let third = try startUpload(from: "198.51.100.2")
        #expect(eventually { server.bodyMemoryInUse == 2 * length })
        #expect(server.bodiesWaitingForMemory == 1)
        _ = (first, second, third)
    }
}
