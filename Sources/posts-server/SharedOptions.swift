import ArgumentParser
import Foundation
import PostsServer

/// The flags every subcommand shares; each wins over its environment variable.
struct SharedOptions: ParsableArguments {
    @Option(help: "libpq connection string or postgres:// URL (env DATABASE_URL).")
    var databaseURL: String?
    @Option(help: "none or transaction: DATABASE_URL is a pooler in transaction mode, e.g. PgBouncer (env DATABASE_POOLER, default none).")
    var databasePooler: String?
    @Option(help: "A direct connection to the primary for LISTEN, migrations and commands (env DATABASE_DIRECT_URL, default DATABASE_URL).")
    var databaseDirectUrl: String?
    @Option(help: "Comma-separated streaming replicas that serve reads (env DATABASE_REPLICA_URLS).")
    var databaseReplicaUrls: String?
    @Option(help: "A replica further behind takes no reads, e.g. 5s, 500ms (env REPLICA_MAX_LAG, default 5s).")
    var replicaMaxLag: String?
    @Option(help: "Address to bind (env HOST, default 127.0.0.1).")
    var host: String?
    @Option(help: "Port to bind; 0 picks a free one (env PORT, default 8080).")
    var port: Int?
    @Option(help: "Where images are stored (env UPLOAD_DIR, default ./uploads).")
    var uploadDir: String?
    @Option(help: "token or trust (env AUTH_MODE, default token).")
    var authMode: String?
    @Option(help: "Database connections (env DB_POOL_SIZE, default 2 x cores).")
    var dbPoolSize: Int?
    @Option(help: "text or json (env LOG_FORMAT, default text).")
    var logFormat: String?
    @Option(help: "Requests per minute per client address on auth routes and writes; 0 is off (env RATE_LIMIT_IP).")
    var rateLimitIp: Int?
    @Option(help: "Requests on one connection before it is closed; at least 1000 (env MAX_REQUESTS_PER_CONNECTION, default 10000).")
    var maxRequestsPerConnection: Int?
    @Option(help: "Event streams open at once per client address; 0 is off (env MAX_STREAMS_PER_IP, default 100).")
    var maxStreamsPerIp: Int?
    @Option(help: "Images processed at once; the rest wait (env IMAGE_CONCURRENCY, default the core count).")
    var imageConcurrency: Int?
    @Option(help: "How long changes are kept, e.g. 7d, 12h, 30m, 90s (env CHANGES_RETENTION, default 7d).")
    var changesRetention: String?
    @Option(help: "How long an unused token keeps working, e.g. 90d, 12h, 5s (env TOKEN_TTL, default 90d).")
    var tokenTtl: String?
    @Option(help: "Open connections; past it new ones are closed at once (env MAX_CONNECTIONS, default 10000).")
    var maxConnections: Int?
    @Option(help: "Open connections from one address (IPv6: one /64); 0 is off (env MAX_CONNECTIONS_PER_IP, default 256).")
    var maxConnectionsPerIp: Int?
    @Option(help: "Comma-separated networks of the load balancers whose X-Forwarded-For names the client (env TRUSTED_PROXIES, default none).")
    var trustedProxies: String?
    @Option(help: "Memory for request bodies being received, e.g. 64MiB; past it reading waits (env MAX_BODY_MEMORY).")
    var maxBodyMemory: String?
    @Option(help: "What the event loops wait on: epoll (Linux only, its default) or dispatch (env EVENT_LOOP).")
    var eventLoop: String?
    @Option(help: "smtp://[user:password@]host[:587] (STARTTLS) or smtps://…[:465]: turns the mailer on (env SMTP_URL).")
    var smtpUrl: String?
    @Option(help: "The sender of sign-in mail: an address or Name <address> (env MAIL_FROM).")
    var mailFrom: String?
    @Option(help: "An extra CA bundle (PEM) for a private mail relay (env SMTP_CA_FILE).")
    var smtpCaFile: String?
    @Option(help: "Words and phrases refused in posts, comments and profiles, one a line; read again on SIGHUP (env BLOCKED_WORDS_FILE).")
    var blockedWordsFile: String?
    @Option(help: "An http(s) URL every new notification is POSTed to, signed: turns push on (env PUSH_WEBHOOK_URL).")
    var pushWebhookUrl: String?
    @Option(help: "The key of the pushes' X-Posts-Signature (HMAC-SHA256); required with the URL (env PUSH_WEBHOOK_SECRET, better kept there).")
    var pushWebhookSecret: String?
    @Option(help: "Where images are kept: file:///folder or s3://bucket[/prefix]?endpoint=…&region=…&path_style=true (env STORAGE_URL; default UPLOAD_DIR).")
    var storageUrl: String?
    @Option(help: "The access key of an s3:// STORAGE_URL (env S3_ACCESS_KEY_ID).")
    var s3AccessKeyId: String?
    @Option(help: "The secret key of an s3:// STORAGE_URL (env S3_SECRET_ACCESS_KEY, better kept there).")
    var s3SecretAccessKey: String?
    @Option(help: "A CDN or public bucket URL: /uploads/<name> redirects there (env S3_PUBLIC_URL).")
    var s3PublicUrl: String?
    @Option(help: "Sign-in providers: name[+email]=issuer|client_id[|client_id…], comma-separated; +email: its verified emails join accounts (env OIDC_PROVIDERS).")
    var oidcProviders: String?
    @Option(help: "What apps call this server (env INSTANCE_NAME, default posts-server).")
    var instanceName: String?
    @Option(help: "Where users reach the operator, shown by apps and GET /api/instance (env CONTACT_EMAIL).")
    var contactEmail: String?
    @Option(help: "The terms of use, an http(s) URL (env TERMS_URL).")
    var termsUrl: String?
    @Option(help: "The privacy policy, an http(s) URL (env PRIVACY_URL).")
    var privacyUrl: String?

    func resolve() throws -> Configuration {
        var environment = ProcessInfo.processInfo.environment
        func override(_ name: String, _ value: String?) {
            if let value { environment[name] = value }
        }
        override("DATABASE_URL", databaseURL)
        override("DATABASE_POOLER", databasePooler)
        override("DATABASE_DIRECT_URL", databaseDirectUrl)
        override("DATABASE_REPLICA_URLS", databaseReplicaUrls)
        override("REPLICA_MAX_LAG", replicaMaxLag)
        override("HOST", host)
        override("PORT", port.map(String.init))
        override("UPLOAD_DIR", uploadDir)
        override("AUTH_MODE", authMode)
        override("DB_POOL_SIZE", dbPoolSize.map(String.init))
        override("LOG_FORMAT", logFormat)
        override("RATE_LIMIT_IP", rateLimitIp.map(String.init))
        override("MAX_CONNECTIONS", maxConnections.map(String.init))
        override("MAX_CONNECTIONS_PER_IP", maxConnectionsPerIp.map(String.init))
        override("TRUSTED_PROXIES", trustedProxies)
        override("MAX_REQUESTS_PER_CONNECTION", maxRequestsPerConnection.map(String.init))
        override("MAX_STREAMS_PER_IP", maxStreamsPerIp.map(String.init))
        override("IMAGE_CONCURRENCY", imageConcurrency.map(String.init))
        override("CHANGES_RETENTION", changesRetention)
        override("MAX_BODY_MEMORY", maxBodyMemory)
        override("TOKEN_TTL", tokenTtl)
        override("EVENT_LOOP", eventLoop)
        override("SMTP_URL", smtpUrl)
        override("MAIL_FROM", mailFrom)
        override("SMTP_CA_FILE", smtpCaFile)
        override("BLOCKED_WORDS_FILE", blockedWordsFile)
        override("PUSH_WEBHOOK_URL", pushWebhookUrl)
        override("PUSH_WEBHOOK_SECRET", pushWebhookSecret)
        override("STORAGE_URL", storageUrl)
        override("S3_ACCESS_KEY_ID", s3AccessKeyId)
        override("S3_SECRET_ACCESS_KEY", s3SecretAccessKey)
        override("S3_PUBLIC_URL", s3PublicUrl)
        override("OIDC_PROVIDERS", oidcProviders)
        override("INSTANCE_NAME", instanceName)
        override("CONTACT_EMAIL", contactEmail)
        override("TERMS_URL", termsUrl)
        override("PRIVACY_URL", privacyUrl)
        do {
            return try Configuration.fromEnvironment(environment)
        } catch let error as Configuration.Invalid {
            throw ValidationError(error.description)
        }
    }

    /// The configuration of a subcommand that cannot run without a database, and the direct
    /// connection to it its own work uses (migrations, roles: `DATABASE_DIRECT_URL`, which a
    /// transaction-mode pooler needs).
    func resolveRequiringDatabase(for command: String) throws -> (Configuration, String) {
        let configuration = try resolve()
        guard let databaseURL = configuration.databaseURL else {
            throw ValidationError("DATABASE_URL is required for `\(command)` (a libpq connection string or postgres:// URL)")
        }
        return (configuration, configuration.database.direct(primary: databaseURL))
    }
}
