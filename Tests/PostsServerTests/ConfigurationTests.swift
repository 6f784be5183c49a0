import Testing
@testable import PostsServer

@Suite struct ConfigurationTests {
    @Test func defaults_matchAPI() throws {
        let configuration = try Configuration.fromEnvironment([:])
        #expect(configuration.databaseURL == nil)
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.uploadDirectory == "./uploads")
        #expect(configuration.authMode == .token)
        #expect(configuration.logFormat == .text)
        #expect(configuration.rateLimitPerIP == 120)
        #expect(configuration.databasePoolSize >= 2)
    }

    @Test func environment_overridesDefaults() throws {
        let configuration = try Configuration.fromEnvironment([
            "DATABASE_URL": "postgres://a@b/c", "HOST": "::1", "PORT": "0", "UPLOAD_DIR": "/tmp/u",
            "AUTH_MODE": "trust", "DB_POOL_SIZE": "3", "LOG_FORMAT": "json", "RATE_LIMIT_IP": "0",
        ])
        #expect(configuration.databaseURL == "postgres://a@b/c")
        #expect(configuration.host == "::1")
        #expect(configuration.port == 0)
        #expect(configuration.authMode == .trust)
        #expect(configuration.databasePoolSize == 3)
        #expect(configuration.logFormat == .json)
        #expect(configuration.rateLimitPerIP == 0)
    }

    @Test(arguments: [("PORT", "http"), ("PORT", "70000"), ("DB_POOL_SIZE", "0"), ("AUTH_MODE", "open"),
                      ("LOG_FORMAT", "xml"), ("RATE_LIMIT_IP", "-1")])
    func invalidValues_nameTheirVariable(_ name: String, _ value: String) {
        do {
            _ = try Configuration.fromEnvironment([name: value])
            Issue.record("\(name)=\(value) was accepted")
        } catch {
            #expect("\(error)".contains(name))
        }
    }

    @Test func trustMode_onlyOnLoopbackUnlessAllowed() throws {
        for host in ["127.0.0.1", "localhost", "::1", "[::1]"] {
            try Configuration.fromEnvironment(["AUTH_MODE": "trust", "HOST": host]).validate()
        }
        #expect(throws: Configuration.Invalid.self) {
            try Configuration.fromEnvironment(["AUTH_MODE": "trust", "HOST": "0.0.0.0"]).validate()
        }
        try Configuration.fromEnvironment(["AUTH_MODE": "trust", "HOST": "0.0.0.0", "TRUST_ANY_HOST": "1"]).validate()
        try Configuration.fromEnvironment(["HOST": "0.0.0.0"]).validate()
    }
}

@Suite struct TimeFormatTests {
    @Test func timestamps_areRFC3339UTCWithMilliseconds() {
        #expect(Timestamp.format(millisecondsSince1970: 1_763_647_387_123) == "2025-11-20T14:03:07.123Z")
        #expect(Timestamp.format(millisecondsSince1970: 0) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.format(millisecondsSince1970: -1) == "1969-12-31T23:59:59.999Z")
    }
}
