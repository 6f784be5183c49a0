import Foundation
import Postgres
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real SMTP server for the mail tests: Tests/TestSupport/smtp_relay.py (Python's
/// aiosmtpd) as a child process on a free loopback port, plain, with STARTTLS required
/// (a certificate made here with `openssl`), with AUTH required too, or with TLS from the
/// first byte. It records every
/// message it accepts; it can be told to refuse the next ones, stopped, and started again
/// on the same port.
public final class SMTPRelay: @unchecked Sendable {
    public enum Setup: Sendable {
        case plain
        case startTLS
        /// TLS from the first byte (`smtps://`, port 465's way).
        case implicitTLS
        /// STARTTLS, then AUTH PLAIN or LOGIN with these credentials, both required.
        case authenticated(user: String, password: String)
    }

    public enum Stage: String, Sendable {
        case rcpt
        case data
    }

    /// One accepted message: the envelope and the raw data as the relay received it.
    public struct Message: Sendable {
        public let mailFrom: String
        public let recipients: [String]
        public let data: String
        public let usedTLS: Bool
        public let authenticated: Bool
    }

    public private(set) var port = 0
    /// The relay's self-signed certificate (PEM), for `SMTP_CA_FILE`; nil for `.plain`.
    public let certificateFile: String?
    private let directory: String
    private let setup: Setup
    private var pid: pid_t = 0

    private var recordFile: String { directory + "/messages.jsonl" }
    private var rulesFile: String { directory + "/rules" }
    private var readyFile: String { directory + "/ready" }

    public init(_ setup: Setup) throws {
        self.setup = setup
        directory = NSTemporaryDirectory() + "posts-smtp-relay-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if case .plain = setup {
            certificateFile = nil
        } else {
            certificateFile = directory + "/cert.pem"
            let made = try ChildProcess.run("/usr/bin/env", ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                                                             "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", directory + "/key.pem",
                                                             "-out", directory + "/cert.pem", "-days", "2", "-subj", "/CN=localhost",
                                                             "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
            guard made.status == 0 else { throw Failure(description: "openssl could not make the relay's certificate: \(made.output)") }
        }
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts the relay (again, on the same port once it had one) and waits until it listens.
    public func start() throws {
        guard pid == 0 else { return }
        var arguments = ["--port", String(port), "--record", recordFile, "--rules", rulesFile, "--ready", readyFile]
        if let certificateFile { arguments += ["--cert", certificateFile, "--key", directory + "/key.pem"] }
        if case .authenticated(let user, let password) = setup { arguments += ["--user", user, "--password", password] }
        if case .implicitTLS = setup { arguments.append("--implicit-tls") }
        (pid, port) = try PythonService.start(PythonService.script("smtp_relay.py"), arguments, readyFile: readyFile,
                                              log: directory + "/relay.log", name: "the SMTP relay", timeout: .seconds(20))
    }

    /// Stops the relay (SIGTERM, then waits for it): its port refuses connections.
    public func stop() {
        PythonService.stop(pid)
        pid = 0
    }

    /// The next `count` transactions are answered `code` at `stage` instead of accepted.
    public func refuseNext(_ count: Int, with code: Int, at stage: Stage) throws {
        try "\(code) \(count) \(stage.rawValue)\n".write(toFile: rulesFile, atomically: true, encoding: .utf8)
    }

    /// Everything accepted so far, in order.
    public var messages: [Message] {
        guard let text = try? String(contentsOfFile: recordFile, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let data = (object["data"] as? String).flatMap({ Data(base64Encoded: $0) }) else { return nil }
            return Message(mailFrom: object["mail_from"] as? String ?? "", recipients: object["rcpt_tos"] as? [String] ?? [],
                           data: String(decoding: data, as: UTF8.self), usedTLS: object["tls"] as? Bool ?? false,
                           authenticated: object["authenticated"] as? Bool ?? false)
        }
    }

    /// Waits until at least `count` messages arrived; nil if they did not within `timeout`.
    public func waitForMessages(_ count: Int, timeout: Duration = .seconds(20)) -> [Message]? {
        eventuallyValue(timeout: timeout) {
            let messages = self.messages
            return messages.count >= count ? messages : nil
        }
    }
}
