import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private PostgreSQL cluster in a directory of its own, driven by the installed server
/// binaries (initdb, pg_ctl): the embedded default of `posts-server dev` and the throwaway
/// database of the tests. It listens on a Unix socket only. initdb refuses to run as root,
/// so as root (on Linux: CI, containers) the cluster belongs to the `postgres` system user;
/// on macOS it always runs as whoever runs us.
public struct LocalCluster: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Holds `data/`, the server log and the socket.
    public let directory: URL
    public let port: Int
    public let binDirectory: String
    /// Settings passed to the server as `-c name=value`.
    public var settings: [String: String] = [:]

    public var dataDirectory: URL { directory.appendingPathComponent("data") }
    public var logFile: URL { directory.appendingPathComponent("postgres.log") }

    /// Unix socket paths are limited to ~107 bytes; a deep directory gets its socket in /tmp.
    public var socketDirectory: String {
        if directory.path.utf8.count <= 80 { return directory.path }
        return "/tmp/posts-server-\(Self.stableHash(directory.path))"
    }

    /// FNV-1a: the same name for the same path in every run (`Hasher` is seeded per process).
    public static func stableHash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 36)
    }

    public init(directory: URL, port: Int = 5432) throws {
        self.directory = directory.standardizedFileURL
        self.port = port
        self.binDirectory = try Self.findBinDirectory()
    }

    /// The libpq connection string for a database of this cluster.
    public func conninfo(database: String = "postgres") -> String {
        "host=\(socketDirectory) port=\(port) user=postgres dbname=\(database)"
    }

    public var isInitialized: Bool {
        FileManager.default.fileExists(atPath: dataDirectory.appendingPathComponent("PG_VERSION").path)
    }

    /// initdb (if needed), then start; a cluster that is already running is left as it is.
    public func start() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if socketDirectory != directory.path {
            try FileManager.default.createDirectory(atPath: socketDirectory, withIntermediateDirectories: true)
            try handToOwner(socketDirectory)
        }
        try handToOwner(directory.path)
        if !isInitialized {
            try run("initdb", ["-D", dataDirectory.path, "-U", "postgres", "-A", "trust", "-E", "UTF8"]
                        + Self.localeOptions + ["--no-sync"], what: "initdb")
        }
        if isRunning { return }
        var options = ["-k \(socketDirectory)", "-p \(port)", "-c listen_addresses=''"]
        for (name, value) in settings.sorted(by: { $0.key < $1.key }) { options.append("-c \(name)=\(value)") }
        try run("pg_ctl", ["-D", dataDirectory.path, "-l", logFile.path, "-w", "-t", "60",
                           "-o", options.joined(separator: " "), "start"], what: "starting PostgreSQL")
    }

    /// A fast shutdown: connections are cut, nothing committed is lost.
    public func stop() throws {
        guard isRunning else { return }
        try run("pg_ctl", ["-D", dataDirectory.path, "-m", "fast", "-w", "-t", "60", "stop"], what: "stopping PostgreSQL")
    }

    /// A streaming replica of this (running) cluster in `directory`, not started yet: a base
    /// backup taken with `pg_basebackup -R`, which leaves it configured to follow this one.
    /// It runs with this one's settings: a standby refuses to replay with fewer connections
    /// (and other limits) than its primary's.
    public func makeStandby(in directory: URL) throws -> LocalCluster {
        var standby = try LocalCluster(directory: directory, port: port)
        standby.settings = settings
        try FileManager.default.createDirectory(at: standby.directory, withIntermediateDirectories: true)
        try handToOwner(standby.directory.path)
        try run("pg_basebackup", ["-D", standby.dataDirectory.path, "-R", "-X", "stream", "-c", "fast",
                                  "-h", socketDirectory, "-p", String(port), "-U", "postgres"], what: "pg_basebackup")
        return standby
    }

    public var isRunning: Bool {
        isInitialized && (try? run("pg_ctl", ["-D", dataDirectory.path, "status"], what: "pg_ctl status")) != nil
    }

    /// Whether the user the cluster would run as can reach `directory` (enter it and every
    /// folder above it); always true when we are not root, since the cluster then runs as us.
    public static func postgresUserCanReach(_ directory: URL) -> Bool {
        guard handsClusterToPostgresUser else { return true }
        let outcome = try? ChildProcess.run("/usr/sbin/runuser", ["-u", "postgres", "--", "test", "-x", directory.path])
        return outcome?.status == 0
    }

    /// Code-point order and Unicode case rules. macOS has no C.UTF-8 locale: there the
    /// character rules come from en_US.UTF-8 (always installed) and the order from C, which
    /// for UTF-8 is the same code-point order.
    #if os(Linux)
    private static let localeOptions = ["--locale=C.UTF-8"]
    #else
    private static let localeOptions = ["--locale=en_US.UTF-8", "--lc-collate=C"]
    #endif

    // MARK: Processes

    /// Root on Linux hands the cluster to the `postgres` user (runuser). macOS has no
    /// runuser, and its developers are not root: there initdb's own refusal of root is the
    /// answer.
    private static var handsClusterToPostgresUser: Bool {
        #if os(Linux)
        geteuid() == 0
        #else
        false
        #endif
    }

    /// Runs a server binary, as the `postgres` user when we are root; throws with its output.
    @discardableResult
    private func run(_ tool: String, _ arguments: [String], what: String) throws -> String {
        let binary = "\(binDirectory)/\(tool)"
        let outcome = Self.handsClusterToPostgresUser
            ? try ChildProcess.run("/usr/sbin/runuser", ["-u", "postgres", "--", binary] + arguments)
            : try ChildProcess.run(binary, arguments)
        guard outcome.status == 0 else {
            throw Failure(description: "\(what) failed (\(tool) exited \(outcome.status)): \(outcome.output)")
        }
        return outcome.output
    }

    private func handToOwner(_ path: String) throws {
        guard Self.handsClusterToPostgresUser else { return }
        guard let user = getpwnam("postgres") else {
            throw Failure(description: "running as root needs the `postgres` system user (apt-get install postgresql)")
        }
        guard chown(path, user.pointee.pw_uid, user.pointee.pw_gid) == 0, chmod(path, 0o700) == 0 else {
            throw Failure(description: "cannot hand \(path) to the postgres user (errno \(errno))")
        }
    }

    /// The first folder holding initdb of: `pg_config --bindir`; the newest
    /// /usr/lib/postgresql/*/bin (Debian keeps the server binaries off PATH); Homebrew's
    /// keg-only postgresql@16 (Apple silicon, then Intel); PATH.
    static func findBinDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        let fileManager = FileManager.default
        let path = (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        var candidates: [String] = []
        for pgConfig in ["/usr/bin/pg_config"] + path.map({ "\($0)/pg_config" })
        where fileManager.isExecutableFile(atPath: pgConfig) {
            if let fromConfig = try? Self.capture(pgConfig, ["--bindir"]) { candidates.append(fromConfig) }
            break
        }
        let debianRoot = "/usr/lib/postgresql"
        let versions = ((try? fileManager.contentsOfDirectory(atPath: debianRoot)) ?? []).compactMap(Int.init).sorted(by: >)
        candidates += versions.map { "\(debianRoot)/\($0)/bin" }
        candidates += ["/opt/homebrew/opt/postgresql@16/bin", "/usr/local/opt/postgresql@16/bin"]
        candidates += path
        guard let found = candidates.first(where: { fileManager.isExecutableFile(atPath: "\($0)/initdb") }) else {
            #if os(Linux)
            throw Failure(description: "no PostgreSQL server binaries found (apt-get install postgresql)")
            #else
            throw Failure(description: "no PostgreSQL server binaries found (brew install postgresql@16)")
            #endif
        }
        return found
    }

    private static func capture(_ executable: String, _ arguments: [String]) throws -> String {
        let outcome = try ChildProcess.run(executable, arguments)
        guard outcome.status == 0 else { throw Failure(description: "\(executable) exited \(outcome.status)") }
        return outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
