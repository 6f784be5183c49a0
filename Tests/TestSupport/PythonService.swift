import Foundation
import Postgres
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A Python stand-in for another service (the SMTP relay, the push services) as a child
/// process: started with the test tools' venv, ready once it wrote its port to a file,
/// stopped with SIGTERM and waited for.
enum PythonService {
    /// The venv's python: scripts/python-tools.sh exports it; a `swift test` run without it
    /// finds the same venv under .build.
    static var python: String {
        if let path = ProcessInfo.processInfo.environment["SMTP_RELAY_PYTHON"], !path.isEmpty { return path }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/python-tools/bin/python").path
    }

    /// A script beside this file.
    static func script(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(name).path
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts `script` with `arguments` (output appended to `log`) and waits until it wrote
    /// its port to `readyFile` (removed first); the child's pid and the port.
    static func start(_ script: String, _ arguments: [String], readyFile: String, log: String,
                      name: String, timeout: Duration = .seconds(30)) throws -> (pid: pid_t, port: Int) {
        unlink(readyFile)
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw Failure(description: "no python with the test tools at \(python): run scripts/test (it installs them)")
        }
        let pid = try ChildProcess.start(python, [script] + arguments, appendingOutputTo: log)
        let ready = eventuallyValue(timeout: timeout) { (try? String(contentsOfFile: readyFile, encoding: .utf8)).flatMap { Int($0) } }
        guard let ready else {
            stop(pid)
            throw Failure(description: "\(name) did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
        return (pid, ready)
    }

    /// SIGTERM, then waits for it: its port refuses connections.
    static func stop(_ pid: pid_t) {
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
}
