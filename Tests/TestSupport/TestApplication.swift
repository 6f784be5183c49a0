import Foundation
import HTTP
import Logging
import PostsServer

/// The whole application on a free loopback port, over a database of the test run.
public enum TestApplication {
    /// `cluster`: `.changes` for a test of the change feed (see `TestDatabase.Cluster`).
    /// `clock`: the server's clock, for a test that advances it rather than waiting.
    public static func start(
        cluster: TestDatabase.Cluster = .shared,
        conninfo: String? = nil,
        accessLog: (any AccessLog)? = nil,
        clock: ServerClock = ServerClock(),
        configure: (inout Configuration) -> Void = { _ in }
    ) throws -> Application {
        var configuration = Configuration()
        configuration.databaseURL = try conninfo ?? TestDatabase.makeDatabase(in: cluster)
        // The pooler pass (scripts/test): through PgBouncer in transaction mode, LISTEN direct.
        if conninfo == nil, TestPooler.isRequested, !cluster.isOwn, let direct = configuration.databaseURL {
            configuration.databaseURL = try TestPooler.pooler(for: TestDatabase.cluster(cluster)).route(direct)
            configuration.database.pooler = .transaction
            configuration.database.directURL = direct
        } else if let conninfo, let direct = TestPooler.direct(behind: conninfo) {
            configuration.database.pooler = .transaction
            configuration.database.directURL = direct
        }
        configuration.port = 0
        configuration.databasePoolSize = 4
        configuration.authMode = .trust
        // Tests write from one address far faster than a person: limits are tested on their own.
        configuration.rateLimitPerIP = 0
        configuration.uploadDirectory = ScratchDirectory.path("uploads")
        configuration.eventLoop = try TestEventLoop.fromEnvironment()
        configure(&configuration)
        var logger = Logger(label: "test-app")
        logger.logLevel = ProcessInfo.processInfo.environment["TEST_LOG_ERRORS"] == nil ? .critical : .error
        return try Application(configuration: configuration, logger: logger, accessLog: accessLog ?? SilentAccessLog(),
                               clock: clock)
    }
}

/// Keeps test output readable: the access log is tested through the executable.
public struct SilentAccessLog: AccessLog {
    public init() {}
    public func record(_ entry: AccessLogEntry) {}
}
