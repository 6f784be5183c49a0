import CLinux
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The built `posts-server` executable run as a child process, its output read line by line.
public final class ServerProcess: @unchecked Sendable {
    public let pid: pid_t
    private let output: Int32
    private var buffer: [UInt8] = []
    public private(set) var lines: [String] = []

    /// `.build/<triple>/debug/posts-server`, beside the test bundle.
    public static var executable: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("posts-server").path
    }

    /// `prefix` runs the server through another program (`prlimit … --`, say).
    /// `blockingTermination` starts it with SIGTERM and SIGINT blocked, as a child of a
    /// Dispatch thread would be; otherwise it starts with no signal blocked.
    public init(_ arguments: [String], environment: [String: String] = [:], prefix: [String] = [],
                blockingTermination: Bool = false) throws {
        #if canImport(Darwin)
        var attributes: posix_spawnattr_t? = nil
        #else
        var attributes = posix_spawnattr_t()
        #endif
        guard clinux_spawnattr_init_clean_signals(&attributes) == 0 else {
            throw RawHTTPClient.Failure(description: "posix_spawnattr_init failed")
        }
        defer { posix_spawnattr_destroy(&attributes) }
        if blockingTermination {
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGTERM)
            sigaddset(&blocked, SIGINT)
            posix_spawnattr_setsigmask(&attributes, &blocked)
        }
        var pipe: [Int32] = [0, 0]
        // Close-on-exec, so no other child started meanwhile (a cluster's postmaster, say)
        // inherits the write end and keeps the output from ending.
        guard clinux_pipe_cloexec(&pipe) == 0 else { throw RawHTTPClient.Failure(description: "pipe failed") }
        // An opaque pointer on Darwin (nil until init), a struct on Linux.
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 2)
        clinux_spawn_close_from(&actions, 3)
        var merged = ProcessInfo.processInfo.environment
        for name in ["DATABASE_URL", "HOST", "PORT", "AUTH_MODE", "LOG_FORMAT", "DB_POOL_SIZE", "UPLOAD_DIR",
                     "MAX_CONNECTIONS", "MAX_BODY_MEMORY", "RATE_LIMIT_IP", "STORAGE_URL", "S3_PUBLIC_URL",
                     "MAX_REQUESTS_PER_CONNECTION", "MAX_STREAMS_PER_IP", "SMTP_URL", "MAIL_FROM", "SMTP_CA_FILE",
                     "BLOCKED_WORDS_FILE", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY"] {
            merged[name] = nil
        }
        merged.merge(environment) { $1 }
        let command = prefix + [Self.executable] + arguments
        let argv = command.map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let status = posix_spawn(&child, command[0], &actions, &attributes, argv, envp)
        close(pipe[1])
        guard status == 0 else {
            close(pipe[0])
            throw RawHTTPClient.Failure(description: "cannot start \(Self.executable): \(status)")
        }
        pid = child
        output = pipe[0]
    }

    deinit {
        if !hasExited {
            kill(pid, SIGKILL)
            _ = reap()
        }
        close(output)
    }

    private var hasExited = false
    private var outputEnded = false

    /// Reads output until a line contains `text`; nil if the output ends or time runs out.
    public func waitForLine(containing text: String, timeout: Duration = .seconds(30)) -> String? {
        if let line = lines.first(where: { $0.contains(text) }) { return line }
        let deadline = ContinuousClock.now + timeout
        var checked = lines.count
        while readMore(until: deadline) {
            if let line = lines[checked...].first(where: { $0.contains(text) }) { return line }
            checked = lines.count
        }
        return nil
    }

    /// Reads what the process wrote next into `lines`; false once the output has ended or
    /// the deadline has passed.
    private func readMore(until deadline: ContinuousClock.Instant) -> Bool {
        while !outputEnded, ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard poll(&descriptor, 1, Int32(max(1, remaining.components.seconds * 1000 + 1))) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            guard count > 0 else {
                outputEnded = true
                return false
            }
            buffer += chunk[..<count]
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(String(decoding: buffer[..<newline], as: UTF8.self))
                buffer.removeFirst(newline + 1)
            }
            return true
        }
        return false
    }

    public func signal(_ number: Int32) { kill(pid, number) }

    /// The exit code once the process ends (128 + signal when killed by one), with all its
    /// output read; nil if it is still running after `timeout`: it is then killed, so that
    /// a server that ignores its stop fails the test instead of hanging the run.
    public func waitForExit(timeout: Duration = .seconds(30)) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        // The output ends when the process exits: nothing else holds the pipe's write end.
        while readMore(until: deadline) {}
        guard outputEnded else {
            kill(pid, SIGKILL)
            _ = reap()
            return nil
        }
        return reap()
    }

    private func reap() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        hasExited = true
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    /// The port from the `listening on http://HOST:PORT` line.
    public func listeningPort() -> Int? {
        guard let line = waitForLine(containing: "listening on http://") else { return nil }
        // Text lines end the address with a space, JSON lines with a quote.
        let url = line[line.range(of: "listening on http://")!.upperBound...]
        let address = url.prefix { !$0.isWhitespace && $0 != "\"" }
        return address.split(separator: ":").last.flatMap { Int($0) }
    }
}
