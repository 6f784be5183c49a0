import CLinux
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a program with `posix_spawn`: to completion (`run`), or in the background
/// (`start`). Foundation's `Process` was seen here to leave children un-reaped (and
/// `waitUntilExit` waiting forever) when several ran at once; this has no monitoring
/// machinery to go wrong. Public for the test support, which starts helper servers the
/// same way.
public enum ChildProcess {
    public struct Outcome: Sendable {
        public let status: Int32
        public let output: String
    }

    /// Output (stdout and stderr) goes to a temp file, not a pipe, and every other descriptor
    /// is closed in the child: a server it starts (pg_ctl's postmaster) lives on after it and
    /// would otherwise keep our pipes and sockets, or those of whoever started us, open for
    /// as long as it runs: a reader waiting for such a pipe to end would wait with it.
    public static func run(_ executable: String, _ arguments: [String]) throws -> Outcome {
        let outputPath = NSTemporaryDirectory() + "posts-server-child-\(getpid())-\(UInt64.random(in: 0 ... .max)).log"
        defer { unlink(outputPath) }
        let pid = try spawn(executable, arguments, output: outputPath, appending: false)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw LocalCluster.Failure(description: "waitpid failed: errno \(errno)") }
        }
        let exitCode = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return Outcome(status: exitCode, output: output)
    }

    /// Starts the program in the background, its output appended to `outputPath`; its pid
    /// (the caller signals and reaps it).
    public static func start(_ executable: String, _ arguments: [String], appendingOutputTo outputPath: String) throws -> pid_t {
        try spawn(executable, arguments, output: outputPath, appending: true)
    }

    private static func spawn(_ executable: String, _ arguments: [String], output outputPath: String,
                              appending: Bool) throws -> pid_t {
        // An opaque pointer on Darwin (nil until init), a struct on Linux.
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | (appending ? O_APPEND : O_TRUNC), 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        clinux_spawn_close_from(&actions, 3)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        #if canImport(Darwin)
        var attributes: posix_spawnattr_t? = nil
        #else
        var attributes = posix_spawnattr_t()
        #endif
        guard clinux_spawnattr_init_clean_signals(&attributes) == 0 else {
            throw LocalCluster.Failure(description: "cannot prepare to start \(executable)")
        }
        defer { posix_spawnattr_destroy(&attributes) }
        let environment = clinux_environment_copy()
        defer { clinux_environment_free(environment) }
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, environment)
        guard spawned == 0 else {
            throw LocalCluster.Failure(description: "cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        return pid
    }
}
