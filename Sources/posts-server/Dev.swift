import ArgumentParser
import Foundation
import Logging
import Postgres
import PostsServer

/// The embedded default: a private PostgreSQL cluster, migrated and seeded, served in
/// trust mode. Nothing to configure.
struct Dev: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run on a private PostgreSQL cluster in ./.data/postgres (trust mode, demo data).")

    @OptionGroup var options: SharedOptions

    @Option(help: "Where the private cluster lives.")
    var dataDir = ".data/postgres"

    @Option(help: "Start from this snapshot (saved with POST /api/dev/snapshots) instead of the data as it is.")
    var restore: String?

    func run() throws {
        defer { StandardOutput.flush() }
        AllocatorTuning.apply()
        try TerminationSignals.install()
        var configuration = try options.resolve()
        if options.authMode == nil && ProcessInfo.processInfo.environment["AUTH_MODE"] == nil {
            configuration.authMode = .trust
        }
        // An app's integration tests write far faster than 120 times a minute, all from
        // this machine: no address limit unless one is asked for.
        if options.rateLimitIp == nil && ProcessInfo.processInfo.environment["RATE_LIMIT_IP"] == nil {
            configuration.rateLimitPerIP = 0
        }
        configuration.logsLoginCodes = true
        let logger = Bootstrap.logger(format: configuration.logFormat)
        var cluster: LocalCluster?
        if configuration.databaseURL == nil {
            let started = try DevCluster.start(at: URL(fileURLWithPath: dataDir), logger: logger)
            cluster = started
            configuration.databaseURL = started.conninfo(database: DevCluster.databaseName)
            // For psql, and for a second instance on this machine (README "Several instances").
            logger.info("the private database", metadata: ["database_url": "\(started.conninfo(database: DevCluster.databaseName))"])
        }
        defer {
            if let cluster {
                logger.info("stopping the private PostgreSQL cluster")
                try? cluster.stop()
            }
        }
        try Migrations.apply(conninfo: configuration.directDatabaseURL!, directory: Migrations.locate(), logger: logger)
        let application = try Application(configuration: configuration, logger: logger)
        if let restore {
            try application.restoreSnapshot(restore)
            logger.info("restored the snapshot", metadata: ["name": "\(restore)"])
        } else if try DemoSeed(pool: application.pool, clock: application.clock).seedIfEmpty() {
            logger.info("seeded demo users and posts")
        }
        logger.info("try it: curl \(application.server.baseURL)/api/health")
        TerminationSignals.wait(onHangUp: application.reload)
        application.stop()
    }
}

/// The private cluster of `dev`.
enum DevCluster {
    static let databaseName = "posts"

    static func start(at requested: URL, logger: Logger) throws -> LocalCluster {
        let directory = try reachableDirectory(for: requested.standardizedFileURL, logger: logger)
        let cluster = try LocalCluster(directory: directory)
        logger.info("starting the private PostgreSQL cluster", metadata: ["directory": "\(requested.path)"])
        try cluster.start()
        let admin = try PostgresConnection(conninfo: cluster.conninfo(), queryTimeout: .zero)
        defer { admin.close() }
        let exists = try admin.query("SELECT count(*) AS n FROM pg_database WHERE datname = \(databaseName)")
            .firstRow().decode("n", as: Int.self) > 0
        if !exists { try admin.execute(unsafeSQL: "CREATE DATABASE \(databaseName)") }
        return cluster
    }

    /// As root the cluster runs as the `postgres` user, who may not be able to enter the
    /// project folder (a checkout under /root, say). Then the cluster lives under
    /// /var/lib/posts-server and `.data/postgres` links to it.
    private static func reachableDirectory(for requested: URL, logger: Logger) throws -> URL {
        let fileManager = FileManager.default
        if let target = try? fileManager.destinationOfSymbolicLink(atPath: requested.path) {
            return URL(fileURLWithPath: target)
        }
        try fileManager.createDirectory(at: requested.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard !LocalCluster.postgresUserCanReach(requested.deletingLastPathComponent()) else { return requested }
        let elsewhere = URL(fileURLWithPath: "/var/lib/posts-server/cluster-\(LocalCluster.stableHash(requested.path))")
        try fileManager.createDirectory(at: elsewhere.deletingLastPathComponent(), withIntermediateDirectories: true)
        try fileManager.createSymbolicLink(at: requested, withDestinationURL: elsewhere)
        logger.info("the postgres user cannot enter the project folder; the cluster lives elsewhere",
                    metadata: ["directory": "\(elsewhere.path)"])
        return elsewhere
    }
}
