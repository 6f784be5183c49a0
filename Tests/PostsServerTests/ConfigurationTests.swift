import HTTP
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
        #expect(configuration.maxConnections == 10_000)
        #expect(configuration.maxConnectionsPerIP == 256)
        #expect(configuration.trustedProxies.isEmpty)
        #expect(configuration.maxRequestsPerConnection == 10_000)
        #expect(configuration.maxStreamsPerIP == 100)
        #expect(configuration.maxBodyMemory == 64 * 1024 * 1024)
        #expect(configuration.eventLoop == PollerKind.platformDefault)
        #expect(configuration.blockedWordsFile == nil)
        #expect(configuration.consoleDirectory == nil)
    }

    @Test func environment_overridesDefaults() throws {
        let configuration = try Configuration.fromEnvironment([
            "DATABASE_URL": "postgres://a@b/c", "HOST": "::1", "PORT": "0", "UPLOAD_DIR": "/tmp/u",
            "AUTH_MODE": "trust", "DB_POOL_SIZE": "3", "LOG_FORMAT": "json", "RATE_LIMIT_IP": "0",
            "MAX_CONNECTIONS": "500", "MAX_BODY_MEMORY": "2MiB", "MAX_REQUESTS_PER_CONNECTION": "1000",
            "MAX_STREAMS_PER_IP": "0", "BLOCKED_WORDS_FILE": "/etc/posts/blocked-words.txt", "CONSOLE_DIR": "/srv/console",
            "MAX_CONNECTIONS_PER_IP": "0", "TRUSTED_PROXIES": "10.0.0.0/8, fd00::/8",
        ])
        #expect(configuration.databaseURL == "postgres://a@b/c")
        #expect(configuration.host == "::1")
        #expect(configuration.port == 0)
        #expect(configuration.authMode == .trust)
        #expect(configuration.databasePoolSize == 3)
        #expect(configuration.logFormat == .json)
        #expect(configuration.rateLimitPerIP == 0)
        #expect(configuration.maxConnections == 500)
        #expect(configuration.maxBodyMemory == 2 * 1024 * 1024)
        #expect(configuration.maxRequestsPerConnection == 1000)
        #expect(configuration.maxStreamsPerIP == 0)
        #expect(configuration.blockedWordsFile == "/etc/posts/blocked-words.txt")
        #expect(configuration.consoleDirectory == "/srv/console")
        #expect(configuration.maxConnectionsPerIP == 0)
        #expect(configuration.trustedProxies.networks.map(\.description) == ["10.0.0.0/8", "fd00::/8"])
    }

    /// A typo in TRUSTED_PROXIES must stop the start, not trust the wrong network.
    @Test func trustedProxies_refusesWhatIsNotANetwork_sayingWhy() {
        let malformed = #expect(throws: Configuration.Invalid.self) {
            try Configuration.fromEnvironment(["TRUSTED_PROXIES": "10.0.0.0/8, 10.0.0/24"])
        }
        #expect(malformed?.description == "TRUSTED_PROXIES must be comma-separated IPv4 or IPv6 networks or addresses, "
            + "like 10.0.0.0/8, 2001:db8::/32, 192.0.2.7: \"10.0.0/24\" is not an address or a network")
        let hostBits = #expect(throws: Configuration.Invalid.self) {
            try Configuration.fromEnvironment(["TRUSTED_PROXIES": "172.16.5.4/12"])
        }
        #expect(hostBits?.description.hasSuffix("\"172.16.5.4/12\" has bits set past its prefix (the network is 172.16.0.0/12)") == true)
    }

    /// API.md: at least 1,000 requests per connection are served.
    @Test func requestsPerConnection_belowAPIsFloor_isRefused() {
        #expect(throws: Configuration.Invalid.self) {
            try Configuration.fromEnvironment(["MAX_REQUESTS_PER_CONNECTION": "999"])
        }
    }

    /// An app's integration tests use a TTL of seconds to reach their sign-in-again path.
    @Test func tokenTTL_takesAnyDurationFromOneSecond() throws {
        for (text, seconds) in [("1s", 1), ("3s", 3), ("90s", 90), ("2m", 120), ("90d", 90 * 86_400)] {
            #expect(try Configuration.fromEnvironment(["TOKEN_TTL": text]).tokenLifetime == .seconds(seconds), "\(text)")
        }
        for bad in ["0s", "3", "1.5s", "-1s", "s"] {
            let refused = #expect(throws: Configuration.Invalid.self, "\(bad)") {
                try Configuration.fromEnvironment(["TOKEN_TTL": bad])
            }
            #expect(refused?.description.hasPrefix("TOKEN_TTL must be a duration") == true)
        }
    }

    /// API.md "Feeds at any scale": the retentions, and where fan-out gives way to merging.
    @Test func retentions_andTheFanOutLimit() throws {
        let defaults = try Configuration.fromEnvironment([:])
        #expect(defaults.notificationsRetention == .seconds(90 * 86_400) && defaults.pushTokenRetention == .seconds(270 * 86_400))
        #expect(defaults.feedFanOutLimit == 10_000)
        let set = try Configuration.fromEnvironment(["NOTIFICATIONS_RETENTION": "30d", "PUSH_TOKEN_RETENTION": "12h",
                                                     "FEED_FANOUT_LIMIT": "500"])
        #expect(set.notificationsRetention == .seconds(30 * 86_400) && set.pushTokenRetention == .seconds(12 * 3600))
        #expect(set.feedFanOutLimit == 500)
        for (name, bad) in [("NOTIFICATIONS_RETENTION", "forever"), ("PUSH_TOKEN_RETENTION", "0s"), ("FEED_FANOUT_LIMIT", "0"),
                            ("FEED_FANOUT_LIMIT", "many")] {
            let refused = #expect(throws: Configuration.Invalid.self, "\(name)=\(bad)") {
                try Configuration.fromEnvironment([name: bad])
            }
            #expect(refused?.description.hasPrefix(name) == true)
        }
    }

    @Test func byteSizes_takeBinaryUnitsOrPlainBytes() {
        #expect(parseByteSize("64MiB") == 64 << 20)
        #expect(parseByteSize("1GiB") == 1 << 30)
        #expect(parseByteSize("100B") == 100)
        #expect(parseByteSize("1048576") == 1 << 20)
        for bad in ["", "MiB", "64 MiB", "64MB", "-1", "1.5GiB", "99999999999999GiB"] {
            #expect(parseByteSize(bad) == nil, "\(bad)")
        }
    }

    @Test(arguments: [("PORT", "http"), ("PORT", "70000"), ("DB_POOL_SIZE", "0"), ("AUTH_MODE", "open"),
                      ("LOG_FORMAT", "xml"), ("RATE_LIMIT_IP", "-1"), ("MAX_CONNECTIONS", "0"), ("MAX_CONNECTIONS_PER_IP", "-1"),
                      ("TRUSTED_PROXIES", "everyone"),
                      ("MAX_BODY_MEMORY", "64MB"), ("MAX_BODY_MEMORY", "512KiB")])
    func invalidValues_nameTheirVariable(_ name: String, _ value: String) {
        do {
            _ = try Configuration.fromEnvironment([name: value])
            Issue.record("\(name)=\(value) was accepted")
        } catch {
            #expect("\(error)".contains(name))
        }
    }

    @Test func databaseTopology_replicasPoolerAndDirectURL() throws {
        let plain = try Configuration.fromEnvironment(["DATABASE_URL": "postgres://a@b/c"])
        #expect(plain.database == DatabaseTopology() && plain.database.replicaMaxLag == .seconds(5))
        #expect(plain.directDatabaseURL == "postgres://a@b/c")
        let scaled = try Configuration.fromEnvironment([
            "DATABASE_URL": "postgres://a@bouncer:6432/c", "DATABASE_POOLER": "transaction",
            "DATABASE_DIRECT_URL": "postgres://a@primary/c",
            "DATABASE_REPLICA_URLS": "postgres://a@r1/c, postgres://a@r2/c,", "REPLICA_MAX_LAG": "250ms",
        ])
        #expect(scaled.database.pooler == .transaction)
        #expect(scaled.directDatabaseURL == "postgres://a@primary/c")
        #expect(scaled.database.replicaURLs == ["postgres://a@r1/c", "postgres://a@r2/c"])
        #expect(scaled.database.replicaMaxLag == .milliseconds(250))
        #expect(try Configuration.fromEnvironment(["REPLICA_MAX_LAG": "1m"]).database.replicaMaxLag == .seconds(60))
        let lag = "REPLICA_MAX_LAG must be a duration up to 1h like 5s, 500ms or 1m, not"
        for (name, bad, message) in [("DATABASE_POOLER", "session", "DATABASE_POOLER must be none or transaction, not \"session\""),
                                     ("REPLICA_MAX_LAG", "0s", "\(lag) \"0s\""), ("REPLICA_MAX_LAG", "-1ms", "\(lag) \"-1ms\""),
                                     ("REPLICA_MAX_LAG", "2h", "\(lag) \"2h\"")] {
            let error = #expect(throws: Configuration.Invalid.self) { try Configuration.fromEnvironment([name: bad]) }
            #expect(error?.description == message)
        }
    }

    @Test func oidcProviders_nameIssuerAndClientIDs() throws {
        let providers = try Configuration.fromEnvironment([
            "OIDC_PROVIDERS": "apple=https://appleid.apple.com|com.example.app, google=https://accounts.google.com|1.apps|2.apps",
        ]).oidcProviders
        #expect(providers == [OIDCProvider(name: "apple", issuer: "https://appleid.apple.com", clientIDs: ["com.example.app"]),
                              OIDCProvider(name: "google", issuer: "https://accounts.google.com", clientIDs: ["1.apps", "2.apps"])])
        #expect(try Configuration.fromEnvironment(["OIDC_PROVIDERS": "local=http://127.0.0.1:9000|app"]).oidcProviders.count == 1)
        for bad in ["apple", "apple=https://appleid.apple.com", "apple=http://appleid.apple.com|app", "=https://x.example|app",
                    "a b=https://x.example|app", "apple=https://x.example|app||b", "a=https://x.example|c,a=https://y.example|c"] {
            #expect(throws: Configuration.Invalid.self, "\(bad)") { try Configuration.fromEnvironment(["OIDC_PROVIDERS": bad]) }
        }
    }

    /// Apple's and Google's verified emails join accounts; another provider's only when its
    /// name carries +email, which is no part of the name it is known by.
    @Test func oidcProviders_linkByEmail_forAppleGoogleAndThoseMarked() throws {
        let providers = try Configuration.fromEnvironment([
            "OIDC_PROVIDERS": "apple=https://appleid.apple.com|app,google=https://accounts.google.com|app,"
                + "corp+email=https://id.corp.example|app|web,other=https://id.other.example|app",
        ]).oidcProviders
        #expect(providers.map(\.name) == ["apple", "google", "corp", "other"])
        #expect(providers.map(\.linksByEmail) == [true, true, true, false])
        #expect(providers[2] == OIDCProvider(name: "corp", issuer: "https://id.corp.example", clientIDs: ["app", "web"],
                                             linksByEmail: true))
        let invalid = "OIDC_PROVIDERS entries are name[+email]=issuer|client_id[|client_id…] with an https issuer, not"
        let mark = "OIDC_PROVIDERS: the only mark after a name is +email (the provider's verified emails link accounts), not"
        let misplaced = "OIDC_PROVIDERS: +email goes after the name"
        for (bad, message) in [
            ("+email=https://x.example|app", "\(invalid) \"+email=https://x.example|app\""),
            ("corp+=https://x.example|app", "\(mark) \"corp+\""),
            ("corp+mail=https://x.example|app", "\(mark) \"corp+mail\""),
            ("corp+EMAIL=https://x.example|app", "\(mark) \"corp+EMAIL\""),
            ("corp+email+email=https://x.example|app", "\(mark) \"corp+email+email\""),
            ("corp+trust+email=https://x.example|app", "\(mark) \"corp+trust+email\""),
            ("corp=https://x.example|app+email", "\(misplaced) (corp+email=…), in \"corp=https://x.example|app+email\""),
            ("corp=https://x.example|+email", "\(misplaced) (corp+email=…), in \"corp=https://x.example|+email\""),
            ("corp=https://x.example+email|app", "\(misplaced) (corp+email=…), in \"corp=https://x.example+email|app\""),
            ("corp+email=https://x.example|app,corp=https://y.example|app", "OIDC_PROVIDERS names corp twice"),
        ] {
            let error = #expect(throws: Configuration.Invalid.self, "\(bad)") { try Configuration.fromEnvironment(["OIDC_PROVIDERS": bad]) }
            #expect(error?.description == message)
        }
    }

    @Test func eventLoop_takesThePlatformsPollersAndNamesThemWhenWrong() throws {
        for kind in PollerKind.available {
            #expect(try Configuration.fromEnvironment(["EVENT_LOOP": kind.rawValue]).eventLoop == kind)
        }
        for bad in ["kqueue", "EPOLL", "io_uring"] {
            let error = #expect(throws: Configuration.Invalid.self) {
                try Configuration.fromEnvironment(["EVENT_LOOP": bad])
            }
            #expect(error?.description == "EVENT_LOOP must be \(Self.acceptedEventLoops), not \"\(bad)\"")
        }
        #if !os(Linux)
        let error = #expect(throws: Configuration.Invalid.self) {
            try Configuration.fromEnvironment(["EVENT_LOOP": "epoll"])
        }
        #expect(error?.description == "EVENT_LOOP must be dispatch, not \"epoll\" (epoll is not available on this platform)")
        #endif
    }

    #if os(Linux)
    private static let acceptedEventLoops = "epoll or dispatch"
    #else
    private static let acceptedEventLoops = "dispatch"
    #endif

    @Test func trustMode_onlyOnLoopbackUnlessAllowed() throws {
        for host in ["127.0.0.1", "localhost", "::1", "[::1]"] {
            try Configuration.fromEnvironment(["AUTH_MODE": "trust", "HOST": host]).validate()
        }
        for host in ["0.0.0.0", "127.example.net", "127.0.0.1.nip.io", "10.0.0.1"] {
            #expect(throws: Configuration.Invalid.self, "\(host)") {
                try Configuration.fromEnvironment(["AUTH_MODE": "trust", "HOST": host]).validate()
            }
        }
        try Configuration.fromEnvironment(["AUTH_MODE": "trust", "HOST": "127.0.0.2"]).validate()
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
