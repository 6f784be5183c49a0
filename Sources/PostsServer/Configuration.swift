import Foundation
import HTTP

/// The operator's settings (API.md "Running"): environment variables, each overridable by
/// a command-line flag of the same name in kebab case.
public struct Configuration: Sendable {
    public enum AuthMode: String, Sendable, CaseIterable {
        case token, trust
    }

    public var databaseURL: String?
    /// `OIDC_PROVIDERS`: sign-in with Apple, Google or any OpenID Connect provider.
    public var oidcProviders: [OIDCProvider] = []
    /// `DATABASE_POOLER`, `DATABASE_DIRECT_URL`, `DATABASE_REPLICA_URLS`, `REPLICA_MAX_LAG`.
    public var database = DatabaseTopology()
    /// The connection to the primary that holds a session (`DATABASE_DIRECT_URL`, else
    /// `DATABASE_URL`): what `LISTEN`, migrations and commands use.
    public var directDatabaseURL: String? { databaseURL.map(database.direct(primary:)) }
    public var host = "127.0.0.1"
    public var port = 8080
    public var uploadDirectory = "./uploads"
    public var authMode = AuthMode.token
    public var trustAnyHost = false
    public var databasePoolSize = 2 * ProcessInfo.processInfo.activeProcessorCount
    public var logFormat = LineLogHandler.Format.text
    public var rateLimitPerIP = 120
    /// Requests on one connection, after which it is closed (the client opens another):
    /// one connection cannot hold a worker's attention forever.
    public var maxRequestsPerConnection = 10_000
    /// Event streams open at once per client address; 0 turns the limit off.
    public var maxStreamsPerIP = 100
    public var maxConnections = 10_000
    /// Open connections from one address (an IPv6 host by its /64); 0 turns the limit off.
    public var maxConnectionsPerIP = 256
    /// The load balancers whose `X-Forwarded-For` names the client (`TRUSTED_PROXIES`);
    /// none by default, when the header is ignored.
    public var trustedProxies = TrustedProxies.none
    /// How long changes are kept for `/api/changes` and `Last-Event-ID` resumes.
    public var changesRetention: Duration = .seconds(7 * 24 * 3600)
    /// Notifications older than this are deleted (API.md: `NOTIFICATIONS_RETENTION`, 90 days).
    public var notificationsRetention: Duration = .seconds(90 * 24 * 3600)
    /// A push token not registered again for this long is removed (`PUSH_TOKEN_RETENTION`).
    public var pushTokenRetention: Duration = .seconds(270 * 24 * 3600)
    /// From this many followers on, an author's posts are merged into its followers' feeds as
    /// they are read instead of copied into each (`FEED_FANOUT_LIMIT`; see `FeedService`).
    public var feedFanOutLimit = Configuration.defaultFeedFanOutLimit
    public static let defaultFeedFanOutLimit = 10_000
    /// A token unused this long stops working (API.md: `TOKEN_TTL`, sliding on last use).
    public var tokenLifetime: Duration = .seconds(90 * 24 * 3600)
    /// A comment line goes to an event stream after this long without events (API.md: 15 s).
    public var eventsKeepAlive: Duration = .seconds(15)
    /// `posts-server dev` logs every sign-in code, so a developer needs no mailer.
    public var logsLoginCodes = false
    /// Bytes of request bodies held in memory at once, all connections together.
    public var maxBodyMemory = 64 * 1024 * 1024
    /// The event loops' poller: epoll (Linux's default) or dispatch (macOS's only one).
    public var eventLoop = PollerKind.platformDefault
    /// Images processed at once (API.md: `IMAGE_CONCURRENCY`, default the core count): the
    /// threads of the server's heavy lane. The rest wait their turn.
    public var imageConcurrency = ProcessInfo.processInfo.activeProcessorCount
    /// `SMTP_URL`, `MAIL_FROM`, `SMTP_CA_FILE`: the built-in mailer, off when nil.
    public var mail: MailSettings?
    /// `BLOCKED_WORDS_FILE`: the word filter's list, read at start and on SIGHUP; off when nil.
    public var blockedWordsFile: String?
    /// `CONSOLE_DIR`: the console's files; when nil, `console/` beside the migrations.
    public var consoleDirectory: String?
    /// `PUSH_WEBHOOK_URL`, `PUSH_WEBHOOK_SECRET`: new notifications POSTed there; off when nil.
    public var push: PushSettings?
    /// APNs, FCM and Web Push, sent to directly (API.md "Push to every device").
    public var pushProviders = PushProviderSettings()
    /// `STORAGE_URL` and the S3 settings: images in `UPLOAD_DIR` when nil.
    public var storage: StorageSettings?
    /// `FEDERATION=on`, `PUBLIC_URL`, `FEDERATION_ALLOW_PRIVATE`: ActivityPub, off when nil.
    public var federation: FederationSettings?

    public init() {}

    /// `INSTANCE_NAME`, `CONTACT_EMAIL`, `TERMS_URL`, `PRIVACY_URL`: what `/api/instance` tells.
    public var instance = InstanceInformation()

    /// API.md's limits on multipart uploads: the whole form, and each image in it.
    /// API.md "Limits": JSON and form bodies, multipart bodies and the images in them.
    public struct UploadLimits: Sendable {
        public var maxJSONBytes: Int
        public var maxFormBytes: Int
        public var maxImageBytes: Int

        public static let api = UploadLimits(maxJSONBytes: 1024 * 1024, maxFormBytes: 11 * 1024 * 1024,
                                             maxImageBytes: 10 * 1024 * 1024)
    }

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String

        static let missingDatabaseURL = Invalid(
            description: "DATABASE_URL is not set: give a libpq connection string or postgres:// URL "
                + "(or use `posts-server dev` for a private database)")
    }

    /// Refuses combinations that are unsafe rather than malformed.
    public func validate() throws {
        if authMode == .trust && !trustAnyHost && !Self.isLoopback(host) {
            throw Invalid(description: "AUTH_MODE=trust lets anyone act as any user; it only binds to a loopback HOST "
                + "(not \(host)) unless TRUST_ANY_HOST=1")
        }
        if let caFile = mail?.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw Invalid(description: "SMTP_CA_FILE names no readable file: \(caFile)")
        }
    }

    static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        // Numeric addresses only (and localhost): a name such as 127.example.net would
        // pass a prefix test and resolve anywhere.
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        let isIPv4Loopback = octets.count == 4 && octets.first == "127"
            && octets.allSatisfy { $0.count <= 3 && UInt8($0) != nil }
        return bare == "localhost" || bare == "::1" || isIPv4Loopback
    }

    /// The settings the environment gives; a malformed value is an error naming its variable.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> Configuration {
        var configuration = Configuration()
        func value(_ name: String) -> String? {
            environment[name].flatMap { $0.isEmpty ? nil : $0 }
        }
        func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
            guard let text = value(name) else { return nil }
            guard let number = Int(text), range.contains(number) else {
                throw Invalid(description: "\(name) must be a whole number in \(range.lowerBound)...\(range.upperBound), not \"\(text)\"")
            }
            return number
        }
        configuration.databaseURL = value("DATABASE_URL")
        configuration.database = try DatabaseTopology.parse(
            pooler: value("DATABASE_POOLER"), directURL: value("DATABASE_DIRECT_URL"),
            replicaURLs: value("DATABASE_REPLICA_URLS"), maxLag: value("REPLICA_MAX_LAG"))
        configuration.host = value("HOST") ?? configuration.host
        configuration.port = try integer("PORT", in: 0...65535) ?? configuration.port
        configuration.uploadDirectory = value("UPLOAD_DIR") ?? configuration.uploadDirectory
        if let mode = value("AUTH_MODE") {
            guard let parsed = AuthMode(rawValue: mode) else {
                throw Invalid(description: "AUTH_MODE must be token or trust, not \"\(mode)\"")
            }
            configuration.authMode = parsed
        }
        configuration.trustAnyHost = value("TRUST_ANY_HOST") == "1"
        configuration.databasePoolSize = try integer("DB_POOL_SIZE", in: 1...1000) ?? configuration.databasePoolSize
        if let format = value("LOG_FORMAT") {
            guard let parsed = LineLogHandler.Format(rawValue: format) else {
                throw Invalid(description: "LOG_FORMAT must be text or json, not \"\(format)\"")
            }
            configuration.logFormat = parsed
        }
        configuration.rateLimitPerIP = try integer("RATE_LIMIT_IP", in: 0...1_000_000) ?? configuration.rateLimitPerIP
        configuration.maxConnections = try integer("MAX_CONNECTIONS", in: 1...1_000_000) ?? configuration.maxConnections
        configuration.maxConnectionsPerIP = try integer("MAX_CONNECTIONS_PER_IP", in: 0...1_000_000)
            ?? configuration.maxConnectionsPerIP
        if let list = value("TRUSTED_PROXIES") {
            do {
                configuration.trustedProxies = try TrustedProxies(parsing: list)
            } catch {
                throw Invalid.trustedProxies(error)
            }
        }
        // API.md: at least 1,000 requests per connection are served.
        configuration.maxRequestsPerConnection = try integer("MAX_REQUESTS_PER_CONNECTION", in: 1_000...100_000_000)
            ?? configuration.maxRequestsPerConnection
        configuration.maxStreamsPerIP = try integer("MAX_STREAMS_PER_IP", in: 0...1_000_000) ?? configuration.maxStreamsPerIP
        configuration.imageConcurrency = try integer("IMAGE_CONCURRENCY", in: 1...256) ?? configuration.imageConcurrency
        if let text = value("MAX_BODY_MEMORY") {
            // At least one JSON body's worth (1 MiB), or a single body could outgrow it.
            guard let bytes = parseByteSize(text), bytes >= 1 << 20 else {
                throw Invalid(description: "MAX_BODY_MEMORY must be a size of at least 1MiB, like 64MiB, 1024KiB, 1GiB "
                    + "or a number of bytes, not \"\(text)\"")
            }
            configuration.maxBodyMemory = bytes
        }
        if let text = value("CHANGES_RETENTION") {
            guard let retention = parseDuration(text) else {
                throw Invalid(description: "CHANGES_RETENTION must be a duration like 7d, 12h, 30m or 90s, not \"\(text)\"")
            }
            configuration.changesRetention = retention
        }
        for (name, keyPath) in [("NOTIFICATIONS_RETENTION", \Configuration.notificationsRetention),
                                ("PUSH_TOKEN_RETENTION", \Configuration.pushTokenRetention)] {
            guard let text = value(name) else { continue }
            guard let retention = parseDuration(text) else {
                throw Invalid(description: "\(name) must be a duration like 90d, 12h, 30m or 90s, not \"\(text)\"")
            }
            configuration[keyPath: keyPath] = retention
        }
        configuration.feedFanOutLimit = try integer("FEED_FANOUT_LIMIT", in: 1...100_000_000) ?? configuration.feedFanOutLimit
        if let text = value("TOKEN_TTL") {
            // Any whole number of seconds, 1 s up: an app's tests use a few seconds to reach
            // their sign-in-again path (`Tokens` renews `last_used_at` often enough for it).
            guard let lifetime = parseDuration(text) else {
                throw Invalid(description: "TOKEN_TTL must be a duration like 90d, 12h, 30m or 5s, not \"\(text)\"")
            }
            configuration.tokenLifetime = lifetime
        }
        configuration.mail = try MailSettings.parse(smtpURL: value("SMTP_URL"), mailFrom: value("MAIL_FROM"),
                                                    caFile: value("SMTP_CA_FILE"))
        configuration.blockedWordsFile = value("BLOCKED_WORDS_FILE")
        configuration.consoleDirectory = value("CONSOLE_DIR")
        configuration.oidcProviders = try value("OIDC_PROVIDERS").map(OIDCProvider.parseList) ?? []
        configuration.push = try PushSettings.parse(url: value("PUSH_WEBHOOK_URL"), secret: value("PUSH_WEBHOOK_SECRET"))
        configuration.pushProviders = try PushProviderSettings.parse(value)
        configuration.storage = try StorageSettings.parse(url: value("STORAGE_URL"), accessKeyID: value("S3_ACCESS_KEY_ID"),
                                                          secretAccessKey: value("S3_SECRET_ACCESS_KEY"),
                                                          publicURL: value("S3_PUBLIC_URL"))
        configuration.federation = try FederationSettings.parse(
            federation: value("FEDERATION"), publicURL: value("PUBLIC_URL"), allowPrivate: value("FEDERATION_ALLOW_PRIVATE"))
        if let name = value("EVENT_LOOP") {
            guard let kind = PollerKind.named(name) else { throw Invalid.unknownEventLoop(name) }
            configuration.eventLoop = kind
        }
        // Instance information (API.md "Instance information"): its own type, parsed last.
        configuration.instance = try InstanceInformation.parse(
            name: value("INSTANCE_NAME"), contactEmail: value("CONTACT_EMAIL"),
            termsURL: value("TERMS_URL"), privacyURL: value("PRIVACY_URL"))
        return configuration
    }
}

extension Configuration.Invalid {
    static func trustedProxies(_ invalid: TrustedProxies.InvalidEntry) -> Self {
        let why = switch invalid.reason {
        case .malformed: "\"\(invalid.entry)\" is not an address or a network"
        case .hostBitsSet(let network): "\"\(invalid.entry)\" has bits set past its prefix (the network is \(network))"
        }
        return Self(description: "TRUSTED_PROXIES must be comma-separated IPv4 or IPv6 networks or addresses, "
            + "like 10.0.0.0/8, 2001:db8::/32, 192.0.2.7: \(why)")
    }

    static func unknownEventLoop(_ name: String) -> Self {
        let accepted = PollerKind.available.map(\.rawValue).joined(separator: " or ")
        let why = PollerKind(rawValue: name) == nil ? "" : " (\(name) is not available on this platform)"
        return Self(description: "EVENT_LOOP must be \(accepted), not \"\(name)\"\(why)")
    }
}

/// `64MiB`, `512KiB`, `1GiB`, `100B` or plain bytes (`1048576`); nil for anything else.
func parseByteSize(_ text: String) -> Int? {
    let units: [(suffix: String, factor: Int)] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1)]
    let unit = units.first { text.hasSuffix($0.suffix) } ?? ("", 1)
    let digits = text.dropLast(unit.suffix.count)
    guard !digits.isEmpty, digits.count <= 12, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
          let number = Int(digits) else { return nil }
    let (bytes, overflow) = number.multipliedReportingOverflow(by: unit.factor)
    return overflow ? nil : bytes
}

/// `7d`, `12h`, `30m`, `90s`: a positive whole number and one unit; nil for anything else.
func parseDuration(_ text: String) -> Duration? {
    let units: [Character: Int64] = ["d": 86_400, "h": 3_600, "m": 60, "s": 1]
    guard let unit = text.last, let seconds = units[unit], let number = Int64(text.dropLast()), number > 0,
          text.dropLast().allSatisfy(\.isASCII), number <= 10 * 365 * 86_400 / seconds else { return nil }
    return .seconds(number * seconds)
}
