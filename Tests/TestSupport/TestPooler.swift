import CLinux
import Foundation
import Postgres
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Debian's PgBouncer in transaction mode in front of a test cluster, on a loopback port:
/// `scripts/test` runs the end-to-end suites through it (`TEST_POOLER=pgbouncer`), so that
/// everything the server does is tried where no session state outlives a transaction.
/// One per cluster and test process, stopped with it (a guard shell ends it when the test
/// process is gone, killed or not).
public final class TestPooler: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let port: Int
    private let pid: pid_t

    /// Whether this test run goes through a pooler.
    public static var isRequested: Bool {
        ProcessInfo.processInfo.environment["TEST_POOLER"] == "pgbouncer"
    }

    private static let started = Mutex<[String: TestPooler]>([:])

    /// The pooler in front of `cluster` (started on first use).
    public static func pooler(for cluster: LocalCluster) throws -> TestPooler {
        try started.withLock { started in
            if let running = started[cluster.socketDirectory] { return running }
            let pooler = try TestPooler(cluster: cluster)
            started[cluster.socketDirectory] = pooler
            return pooler
        }
    }

    /// `conninfo` (a database of `cluster`) through the pooler.
    public func route(_ conninfo: String) -> String {
        let database = conninfo.split(separator: " ").first { $0.hasPrefix("dbname=") }.map { String($0.dropFirst(7)) } ?? "postgres"
        let routed = "host=127.0.0.1 port=\(port) user=postgres dbname=\(database)"
        Self.routes.withLock { $0[routed] = conninfo }
        return routed
    }

    /// The direct connection behind a connection string `route` made (a second instance
    /// started on the first one's database); nil for any other.
    public static func direct(behind routed: String) -> String? {
        routes.withLock { $0[routed] }
    }

    private static let routes = Mutex<[String: String]>([:])

    private init(cluster: LocalCluster) throws {
        let directory = ScratchDirectory.path("pgbouncer")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o755)
        // Any database of the cluster by its own name; transaction pooling; a few server
        // connections per database (each test's is its own), closed soon after its test.
        let authFile = directory + "/users.txt"
        try #""postgres" """#.write(toFile: authFile, atomically: true, encoding: .utf8)
        var lastError = "no free port"
        for _ in 0..<8 {
            let port = Int.random(in: 20_000...40_000)
            let ini = """
                [databases]
                * = host=\(cluster.socketDirectory) port=\(cluster.port) connect_query='SET statement_timeout = 3000'
                [pgbouncer]
                listen_addr = 127.0.0.1
                listen_port = \(port)
                unix_socket_dir =
                auth_type = trust
                auth_file = \(authFile)
                pool_mode = transaction
                max_client_conn = 2000
                default_pool_size = 6
                max_db_connections = 8
                server_idle_timeout = 10
                autodb_idle_timeout = 30
                ignore_startup_parameters = extra_float_digits
                """
            let iniFile = directory + "/pgbouncer-\(port).ini"
            try ini.write(toFile: iniFile, atomically: true, encoding: .utf8)
            chmod(iniFile, 0o644)
            chmod(authFile, 0o644)
            let binary = FileManager.default.isExecutableFile(atPath: "/usr/sbin/pgbouncer") ? "/usr/sbin/pgbouncer" : "pgbouncer"
            // PgBouncer will not run as root: as root, it runs as the cluster's user.
            let command = geteuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--", binary, iniFile] : [binary, iniFile]
            let pid = try ChildProcess.start("/bin/sh", ["-c", Self.guardScript, "pgbouncer-guard", String(getpid())] + command,
                                             appendingOutputTo: directory + "/pgbouncer.log")
            if Self.waitUntilServing(port: port, pid: pid) {
                self.port = port
                self.pid = pid
                return
            }
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            lastError = (try? String(contentsOfFile: directory + "/pgbouncer.log", encoding: .utf8))?.suffix(2000).description ?? ""
        }
        throw Failure(description: "pgbouncer did not start: \(lastError)")
    }

    /// Until a statement gets through it to the cluster (at most 10 s), or the guard exited.
    private static func waitUntilServing(port: Int, pid: pid_t) -> Bool {
        var exited = false
        let serving = eventually(timeout: .seconds(30)) {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { exited = true; return true }
            guard let connection = try? PostgresConnection(conninfo: "host=127.0.0.1 port=\(port) user=postgres dbname=postgres",
                                                           connectTimeout: .seconds(1), behindTransactionPooler: true) else {
                return false
            }
            defer { connection.close() }
            return (try? connection.query("SELECT 1 AS up")) != nil
        }
        return serving && !exited
    }

    private static let guardScript = """
        parent=$1; shift
        "$@" & bouncer=$!
        trap 'kill -TERM $bouncer 2>/dev/null; wait $bouncer; exit 0' TERM
        while kill -0 "$parent" 2>/dev/null && kill -0 "$bouncer" 2>/dev/null; do sleep 1 & wait $!; done
        kill -TERM "$bouncer" 2>/dev/null
        wait "$bouncer"
        """
}
