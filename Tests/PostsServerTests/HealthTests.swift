import Foundation
import Testing
import TestSupport

@Suite struct HealthTests {
    @Test func pingAndHealth_answer() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try RawHTTPClient(port: app.server.port)
        let ping = try client.exchange("GET /api/ping HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(ping.text == #"{"status":"success","message":"pong"}"#)
        let health = try client.exchange("GET /api/health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(health.status == 200)
        #expect(health.text == #"{"status":"success","database":"ok","mail":"not_configured","storage":"ok","push":{"webhook":"not_configured","apns":"not_configured","fcm":"not_configured","webpush":"not_configured"},"replicas":[]}"#)
    }

    /// The fault test: PostgreSQL stops and starts again under a running server.
    @Test func databaseOutage_is503ThenRecoversWithoutRestart() throws {
        let cluster = try TestDatabase.startThrowawayCluster()
        let app = try TestApplication.start(conninfo: cluster.conninfo())
        defer { app.stop() }
        let client = try RawHTTPClient(port: app.server.port, timeout: .seconds(10))
        #expect(try client.exchange("GET /api/health HTTP/1.1\r\nHost: localhost\r\n\r\n").status == 200)

        try cluster.stop()
        for _ in 0..<3 {
            let started = ContinuousClock.now
            let down = try client.exchange("GET /api/health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(down.status == 503)
            #expect(down.json["error"] as? String == "unavailable")
            #expect(down.header("Retry-After") != nil)
            #expect(ContinuousClock.now - started < .seconds(5))
        }
        #expect(try client.exchange("GET /api/ping HTTP/1.1\r\nHost: localhost\r\n\r\n").status == 200)

        try cluster.start()
        let back = try client.exchange("GET /api/health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(back.status == 200)
    }
}
