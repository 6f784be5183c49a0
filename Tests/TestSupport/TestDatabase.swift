import Foundation
import Postgres
import Synchronization

/// The PostgreSQL of a test run: one throwaway cluster per test process, a template
/// database migrated once, and a fresh copy of it for every test (CREATE DATABASE …
/// TEMPLATE is a file copy: far cheaper than migrating again).
public enum TestDatabase {
    /// The repository's `migrations/` folder.
    public static let migrationsDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("migrations")

    private static let templateName = "posts_template"
    private static let counter = Atomic<Int>(0)

    /// Which of the test process's clusters a database is made in.
    public enum Cluster: Sendable {
        /// Most tests'.
        case shared
        /// The change feed's tests': live delivery waits for the xmin horizon, which is the
        /// whole cluster's, so a long transaction of any other test would hold their
        /// streams back. Here only they run.
        case changes
        /// A cluster of the database's own: for a test that holds the horizon back on
        /// purpose (a transaction with an xid left open), which must not hold back anyone
        /// else's streams.
        case own

        var isOwn: Bool {
            if case .own = self { return true }
            return false
        }
    }

    private static let shared: Result<LocalCluster, any Error> = Result { try migratedCluster() }
    private static let changes: Result<LocalCluster, any Error> = Result { try migratedCluster() }

    private static func migratedCluster() throws -> LocalCluster {
        let cluster = try startThrowawayCluster()
        let admin = try PostgresConnection(conninfo: cluster.conninfo(), queryTimeout: .zero)
        try admin.execute(unsafeSQL: "CREATE DATABASE \(templateName)")
        admin.close()
        try Migrator(directory: migrationsDirectory).migrate(conninfo: cluster.conninfo(database: templateName))
        return cluster
    }

    /// The shared cluster (or the change feed tests'), started on first use and stopped
    /// when the test process exits.
    public static func cluster(_ which: Cluster = .shared) throws -> LocalCluster {
        switch which {
        case .shared: try shared.get()
        case .changes: try changes.get()
        case .own: try migratedCluster()
        }
    }

    /// A new database with every migration applied; returns its connection string.
    public static func makeDatabase(in cluster: Cluster = .shared) throws -> String {
        try createDatabase(prefix: "test", template: templateName, in: cluster)
    }

    /// A new database with every migration applied in a cluster of the caller's (one
    /// `cluster(.own)` returned, say); returns its connection string.
    public static func makeDatabase(on cluster: LocalCluster) throws -> String {
        let name = "test_\(getpid())_\(counter.wrappingAdd(1, ordering: .relaxed).oldValue)"
        let admin = try PostgresConnection(conninfo: cluster.conninfo(), queryTimeout: .zero)
        defer { admin.close() }
        try admin.execute(unsafeSQL: "CREATE DATABASE \(name) TEMPLATE \(templateName)")
        return cluster.conninfo(database: name)
    }

    /// A new, empty database (no migrations), for tests of the migrator itself.
    public static func makeEmptyDatabase() throws -> String {
        try createDatabase(prefix: "empty", template: nil)
    }

    private static func createDatabase(prefix: String, template: String?, in which: Cluster = .shared) throws -> String {
        let cluster = try cluster(which)
        let name = "\(prefix)_\(getpid())_\(counter.wrappingAdd(1, ordering: .relaxed).oldValue)"
        let admin = try PostgresConnection(conninfo: cluster.conninfo(), queryTimeout: .zero)
        defer { admin.close() }
        try admin.execute(unsafeSQL: "CREATE DATABASE \(name)" + (template.map { " TEMPLATE \($0)" } ?? ""))
        return cluster.conninfo(database: name)
    }

    /// An empty database `posts` (no migrations) on a cluster of its own, for a test whose
    /// open transactions would disturb the others, or the others' its: the horizon that
    /// holds back change delivery is the whole cluster's. Stop the cluster when done.
    public static func isolatedEmptyDatabase() throws -> (cluster: LocalCluster, conninfo: String) {
        let cluster = try startThrowawayCluster()
        let admin = try PostgresConnection(conninfo: cluster.conninfo(), queryTimeout: .zero)
        defer { admin.close() }
        try admin.execute(unsafeSQL: "CREATE DATABASE posts")
        return (cluster, cluster.conninfo(database: "posts"))
    }

    /// A cluster of its own in a temp directory, stopped and deleted at process exit.
    /// Tuned for tests: nothing here needs to survive a crash.
    public static func startThrowawayCluster() throws -> LocalCluster {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("posts-server-test-\(getpid())-\(counter.wrappingAdd(1, ordering: .relaxed).oldValue)")
        var cluster = try LocalCluster(directory: directory)
        cluster.settings = ["fsync": "off", "synchronous_commit": "off", "full_page_writes": "off",
                            "max_connections": "300", "shared_buffers": "'128MB'"]
        try cluster.start()
        ClusterCleanup.register(cluster)
        return cluster
    }
}

/// Stops the clusters a test process started when it exits.
enum ClusterCleanup {
    private static let clusters = Mutex<[LocalCluster]>([])

    static func register(_ cluster: LocalCluster) {
        let first = clusters.withLock { list in
            list.append(cluster)
            return list.count == 1
        }
        if first { atexit { ClusterCleanup.stopAll() } }
    }

    static func stopAll() {
        for cluster in clusters.withLock({ $0 }) {
            try? cluster.stop()
            try? FileManager.default.removeItem(at: cluster.directory)
        }
    }
}
