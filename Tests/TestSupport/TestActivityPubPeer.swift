import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An independent ActivityPub server for the federation tests: Tests/TestSupport/
/// activitypub_peer.py, one actor whose HTTP Signatures are bovine's (a Python
/// implementation of its own), on a loopback port. It checks every request the server
/// sends it with bovine's verifier and records it with the verdict; it accepts a follow;
/// the test has it sign and send activities of its own (`send`).
public final class TestActivityPubPeer: @unchecked Sendable {
    /// One request it received: its verdict and its activity.
    public struct Received: @unchecked Sendable {
        public let verified: Bool
        public let activity: [String: Any]
    }

    public let username: String
    public private(set) var port = 0
    private var pid: pid_t = 0
    private let directory: String
    private var recordFile: String { directory + "/records.jsonl" }

    public init(username: String = "peer") throws {
        self.username = username
        directory = NSTemporaryDirectory() + "posts-activitypub-peer-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        (pid, port) = try PythonService.start(PythonService.script("activitypub_peer.py"), [
            "--ready", directory + "/ready", "--records", recordFile, "--username", username,
        ], readyFile: directory + "/ready", log: directory + "/peer.log", name: "the ActivityPub peer")
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    public func stop() {
        PythonService.stop(pid)
        pid = 0
    }

    public var origin: String { "http://127.0.0.1:\(port)" }
    public var domain: String { "127.0.0.1:\(port)" }
    public var acct: String { "\(username)@\(domain)" }
    public var actorID: String { "\(origin)/users/\(username)" }
    public var inbox: String { "\(actorID)/inbox" }

    /// A new id under its origin.
    public func newID(_ kind: String) -> String { "\(origin)/\(kind)/\(UUID().uuidString.lowercased())" }

    /// Has the peer sign `activity` (its `actor` is the peer's) and POST it to `inbox`: the
    /// status that inbox answered.
    public func send(_ activity: [String: Any], to inbox: String) throws -> Int {
        var signed = activity
        signed["actor"] = actorID
        let client = try APIClient(port: port)
        let answer = try client.send("POST", "/control/send", json: ["inbox": inbox, "activity": signed])
        guard answer.status == 200, let status = answer.json["status"] as? Int else {
            throw PythonService.Failure(description: "the peer could not send: \(answer.status) \(answer.text)")
        }
        return status
    }

    /// What it received so far, in order (`verified`: bovine's verifier accepted its signature).
    public func received() -> [Received] {
        guard let text = try? String(contentsOfFile: recordFile, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                  let activity = object["activity"] as? [String: Any] else { return nil }
            return Received(verified: object["verified"] as? Bool ?? false, activity: activity)
        }
    }

    /// What it logged (bovine's reasons for a refusal among it).
    public var log: String { (try? String(contentsOfFile: directory + "/peer.log", encoding: .utf8)) ?? "" }

    /// The first received activity of `type` that `matches`.
    public func received(_ type: String, where matches: ([String: Any]) -> Bool = { _ in true }) -> Received? {
        received().first { $0.activity["type"] as? String == type && matches($0.activity) }
    }
}
