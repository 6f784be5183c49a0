import Foundation
import Postgres
import HTTP
import Testing
import TestSupport

/// The operator's contract, against the built executable.
@Suite struct CommandTests {
    @Test func serveWithoutDatabaseURL_failsNamingIt() throws {
        let process = try ServerProcess(["serve"])
        let exit = try #require(process.waitForExit())
        #expect(exit != 0)
        #expect(process.lines.contains { $0.contains("DATABASE_URL") })
    }

    @Test func serve_migratesServesAndStopsCleanlyOnSIGTERM() throws {
        let conninfo = try TestDatabase.makeEmptyDatabase()
        let process = try ServerProcess(["serve"], environment: ["DATABASE_URL": conninfo, "PORT": "0",
                                                                 "MIGRATIONS_DIR": TestDatabase.migrationsDirectory.path])
        let port = try #require(process.listeningPort())
        #expect(process.lines.contains { $0.contains("applied migration") && $0.contains("0001_initial_schema.sql") })
        let client = try RawHTTPClient(port: port)
        let health = try client.exchange("GET /api/health?probe=1 HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: probe-42\r\n\r\n")
        #expect(health.status == 200)
        let access = try #require(process.waitForLine(containing: "request_id=probe-42"))
        for field in ["info request", "client=127.0.0.1", "method=GET", "path=/api/health ", "route=/api/health ", "status=200", "bytes=\(health.body.count)",
                      "duration_ms="] {
            #expect(access.contains(field), "\(access)")
        }
        process.signal(SIGTERM)
        #expect(process.waitForExit() == 0)
        #expect(process.lines.last?.contains("stopped") == true)
    }

    /// For log shippers: one object per line, the access fields typed (numbers stay numbers).
    @Test func jsonAccessLog_hasTypedFields() throws {
        let conninfo = try TestDatabase.makeDatabase()
        let process = try ServerProcess(["serve", "--no-migrate"],
                                        environment: ["DATABASE_URL": conninfo, "PORT": "0", "LOG_FORMAT": "json"])
        let port = try #require(process.listeningPort())
        let health = try RawHTTPClient(port: port)
            .exchange("GET /api/health HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: json-7\r\n\r\n")
        #expect(health.status == 200)
        let line = try #require(process.waitForLine(containing: "json-7"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["message"] as? String == "request")
        #expect(object["level"] as? String == "info")
        #expect(object["time"] is String)
        #expect(object["request_id"] as? String == "json-7")
        #expect(object["client"] as? String == "127.0.0.1")
        #expect(object["route"] as? String == "/api/health")
        #expect(object["status"] as? Int == 200)
        #expect(object["bytes"] as? Int == health.body.count && health.body.count > 100)
        #expect(object["duration_ms"] is Double || object["duration_ms"] is Int)
        process.signal(SIGTERM)
        #expect(process.waitForExit() == 0)
    }

    /// SIGTERM is caught from the start: one that arrives while the server is still
    /// migrating is kept, and the server stops cleanly as soon as it is up.
    @Test func sigtermDuringStartup_stopsCleanlyOnceUp() throws {
        let conninfo = try TestDatabase.makeEmptyDatabase()
        let process = try ServerProcess(["serve"], environment: ["DATABASE_URL": conninfo, "PORT": "0",
                                                                 "MIGRATIONS_DIR": TestDatabase.migrationsDirectory.path])
        #expect(process.waitForLine(containing: "applied migration") != nil)
        process.signal(SIGTERM)
        #expect(process.waitForExit() == 0)
        #expect(process.lines.contains { $0.contains("listening on http://") })
        #expect(process.lines.last?.contains("stopped") == true)
    }

    /// A parent may start us with SIGTERM blocked (a child inherits the mask of the thread
    /// that spawned it): the server unblocks it and still stops cleanly.
    @Test func sigterm_stopsCleanlyEvenWhenStartedBlocked() throws {
        let conninfo = try TestDatabase.makeDatabase()
        let process = try ServerProcess(["serve", "--no-migrate"], environment: ["DATABASE_URL": conninfo, "PORT": "0"],
                                        blockingTermination: true)
        #expect(process.listeningPort() != nil)
        process.signal(SIGTERM)
        #expect(process.waitForExit() == 0)
    }

    @Test func migrate_isIdempotent_andJSONLogsAreJSON() throws {
        let conninfo = try TestDatabase.makeEmptyDatabase()
        let environment = ["DATABASE_URL": conninfo, "LOG_FORMAT": "json",
                           "MIGRATIONS_DIR": TestDatabase.migrationsDirectory.path]
        for _ in 0..<2 {
            let process = try ServerProcess(["migrate"], environment: environment)
            #expect(process.waitForExit() == 0)
            #expect(!process.lines.isEmpty)
            for line in process.lines {
                #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "\(line)")
            }
        }
    }

    /// A failed migration says what PostgreSQL said: here, the search migration's refusal
    /// to a role that may not create its extensions, naming what to run.
    @Test func migrate_aFailedMigrationSaysWhy() throws {
        let cluster = try TestDatabase.cluster()
        let admin = try PostgresConnection(conninfo: cluster.conninfo())
        let suffix = UUID().uuidString.prefix(8).lowercased()
        try admin.execute(unsafeSQL: "CREATE ROLE guest_\(suffix) LOGIN")
        try admin.execute(unsafeSQL: "CREATE DATABASE lent_\(suffix)")
        let owner = try PostgresConnection(conninfo: cluster.conninfo(database: "lent_\(suffix)"))
        try owner.execute(unsafeSQL: "GRANT CREATE ON SCHEMA public TO guest_\(suffix)")
        let process = try ServerProcess(["migrate"], environment: [
            "DATABASE_URL": "host=\(cluster.socketDirectory) port=\(cluster.port) user=guest_\(suffix) dbname=lent_\(suffix)",
            "MIGRATIONS_DIR": TestDatabase.migrationsDirectory.path])
        #expect(try #require(process.waitForExit()) != 0)
        #expect(process.lines.contains { $0.contains("0021_search.sql") && $0.contains("CREATE EXTENSION unaccent") },
                "\(process.lines)")
    }

    /// The environment's values are invalid: the server starts only if the flags win.
    @Test func flag_winsOverEnvironment() throws {
        let conninfo = try TestDatabase.makeDatabase()
        let process = try ServerProcess(["serve", "--no-migrate", "--port", "0", "--max-body-memory", "1MiB",
                                         "--trusted-proxies", "10.0.0.0/8", "--max-connections-per-ip", "5"],
                                        environment: ["DATABASE_URL": conninfo, "PORT": "notaport",
                                                      "MAX_BODY_MEMORY": "lots", "TRUSTED_PROXIES": "10.0.0.1/8",
                                                      "MAX_CONNECTIONS_PER_IP": "many"])
        let port = try #require(process.listeningPort())
        #expect(port != 0)
        process.signal(SIGTERM)
        #expect(process.waitForExit() == 0)
    }

    @Test func invalidEnvironment_failsNamingTheVariable() throws {
        let process = try ServerProcess(["serve"], environment: ["DATABASE_URL": "postgres://x@y/z", "PORT": "notaport"])
        #expect(try #require(process.waitForExit()) != 0)
        #expect(process.lines.contains { $0.contains("PORT") })
    }

    @Test func invalidTrustedProxies_failsAtStartNamingTheEntry() throws {
        let process = try ServerProcess(["serve", "--trusted-proxies", "10.0.0.0/8,192.168.1.1/16"],
                                        environment: ["DATABASE_URL": "postgres://x@y/z"])
        #expect(try #require(process.waitForExit()) != 0)
        #expect(process.lines.contains { $0.contains("TRUSTED_PROXIES") && $0.contains("192.168.0.0/16") })
    }

    @Test func unknownEventLoop_failsNamingTheAcceptedOnes() throws {
        let process = try ServerProcess(["serve"], environment: ["DATABASE_URL": "postgres://x@y/z", "EVENT_LOOP": "kqueue"])
        #expect(try #require(process.waitForExit()) != 0)
        let accepted = PollerKind.available.map(\.rawValue).joined(separator: " or ")
        #expect(process.lines.contains { $0.contains("EVENT_LOOP must be \(accepted), not \"kqueue\"") })
    }

    /// A server that would send unsigned pushes, or push anywhere but http(s), never starts.
    @Test func serve_refusesAnUnsignedOrNonHTTPPushWebhook() throws {
        let unsigned = try ServerProcess(["serve", "--no-migrate"], environment: [
            "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none", "PUSH_WEBHOOK_URL": "https://hooks.example.com/push"])
        #expect(try #require(unsigned.waitForExit()) != 0)
        #expect(unsigned.lines.contains { $0.contains("PUSH_WEBHOOK_SECRET is required with PUSH_WEBHOOK_URL") })
        let smtp = try ServerProcess(["serve", "--no-migrate", "--push-webhook-url", "smtp://hooks.example.com"], environment: [
            "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none", "PUSH_WEBHOOK_SECRET": "shh"])
        #expect(try #require(smtp.waitForExit()) != 0)
        #expect(smtp.lines.contains { $0.contains("PUSH_WEBHOOK_URL must start with http:// or https://") })
    }

    @Test func trustMode_refusesNonLoopbackHost() throws {
        let conninfo = try TestDatabase.makeDatabase()
        let process = try ServerProcess(["serve", "--no-migrate"], environment: [
            "DATABASE_URL": conninfo, "AUTH_MODE": "trust", "HOST": "0.0.0.0", "PORT": "0"])
        #expect(try #require(process.waitForExit()) != 0)
        #expect(process.lines.contains { $0.contains("TRUST_ANY_HOST") })
    }
}

@Suite struct DevCommandTests {
    /// The README's first command: a private cluster, migrated and seeded, trust mode; Ctrl-C
    /// stops the server and the cluster. A second start reuses the cluster and seeds nothing.
    @Test func dev_runsOnAPrivateClusterAndStopsIt() throws {
        let dataDirectory = ScratchDirectory.path("dev") + "/postgres"
        defer { try? FileManager.default.removeItem(atPath: (dataDirectory as NSString).deletingLastPathComponent) }
        let environment = ["PORT": "0", "MIGRATIONS_DIR": TestDatabase.migrationsDirectory.path]
        for run in 0..<2 {
            let process = try ServerProcess(["dev", "--data-dir", dataDirectory], environment: environment)
            let port = try #require(process.listeningPort())
            #expect(process.waitForLine(containing: "try it: curl") != nil)
            #expect(process.lines.contains { $0.contains("seeded demo users and posts") } == (run == 0))
            let client = try RawHTTPClient(port: port)
            #expect(try client.exchange("GET /api/health HTTP/1.1\r\nHost: localhost\r\n\r\n").status == 200)
            if run == 0 {
                // dev logs each sign-in code, so no mailer is needed.
                let body = #"{"email":"dev@example.com"}"#
                let sent = try client.exchange("POST /api/auth/send-code HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                                               + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
                #expect(sent.status == 200)
                let logged = try #require(process.waitForLine(containing: "sign-in code"))
                #expect(logged.contains("email=dev@example.com") && logged.firstMatch(of: /code=[0-9]{6}/) != nil)
            }
            process.signal(SIGINT)
            #expect(process.waitForExit() == 0)
            #expect(process.lines.contains { $0.contains("stopping the private PostgreSQL cluster") })
            let postmasterPID = (dataDirectory as NSString).appendingPathComponent("data/postmaster.pid")
            #expect(!FileManager.default.fileExists(atPath: postmasterPID), "the cluster is still running")
        }
    }
}

@Suite struct DescriptorExhaustionTests {
    /// Out of file descriptors, accept fails with EMFILE: the server must pause accepting
    /// (not spin, not crash) and serve again once connections are freed. Needs util-linux's
    /// prlimit (Linux) to start the server under a low limit.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit")))
    func outOfDescriptors_pausesAcceptingAndRecovers() throws {
        let conninfo = try TestDatabase.makeDatabase()
        let process = try ServerProcess(
            ["serve", "--no-migrate"],
            environment: ["DATABASE_URL": conninfo, "PORT": "0"],
            prefix: ["/usr/bin/prlimit", "--nofile=48:48", "--"])
        let port = try #require(process.listeningPort())
        var held: [RawHTTPClient] = []
        for _ in 0..<60 {
            // Past the limit the kernel still completes connections into the backlog.
            held.append(try RawHTTPClient(port: port, timeout: .seconds(2)))
        }
        #expect(process.waitForLine(containing: "accept failed") != nil)
        held.removeAll()
        let client = try RawHTTPClient(port: port, timeout: .seconds(10))
        #expect(try client.exchange("GET /api/ping HTTP/1.1\r\nHost: localhost\r\n\r\n").status == 200)
        process.signal(SIGTERM)
        #expect(process.waitForExit() == 0)
    }
}
