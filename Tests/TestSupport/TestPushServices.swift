import Foundation
import Postgres
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Apple's, Google's and the browsers' push services as local stand-ins for the direct
/// push tests: Tests/TestSupport/push_services.py (Python's h2, cryptography and http_ece)
/// as a child process on a loopback port, TLS with a test CA, HTTP/2. It made the keys the
/// server is configured with and the browsers' subscriptions; it verifies every provider
/// token, assertion, access token and VAPID signature, decrypts Web Push bodies with its
/// own library, and records every request. It can be told to answer the next requests with
/// a given status, stopped, and started again on the same port.
public final class TestPushServices: @unchecked Sendable {
    /// One request the services answered (accepted or not).
    public struct Request: Sendable {
        public let service: String
        public let connection: Int
        public let stream: Int
        public let token: String?
        public let status: Int
        /// The JSON the device would get (APNs' payload, FCM's message, the decrypted Web
        /// Push message), for an accepted push.
        public let payload: [String: any Sendable]?
        public let headers: [String: String]
        /// The provider token (APNs) or access token (FCM) it carried.
        public let credential: String?
    }

    /// A rule: the next `count` requests to `service` (for `token`, if given) are answered
    /// `status`, with `reason` (APNs' reason, FCM's error code) and `Retry-After`.
    public struct Rule: Sendable {
        public var service: String
        public var token: String?
        public var status: Int
        public var reason: String?
        public var retryAfter: Int?
        public var count: Int

        public init(service: String, token: String? = nil, status: Int, reason: String? = nil, retryAfter: Int? = nil, count: Int = 1) {
            self.service = service
            self.token = token
            self.status = status
            self.reason = reason
            self.retryAfter = retryAfter
            self.count = count
        }
    }

    public private(set) var port = 0
    public let directory: String
    private var pid: pid_t = 0
    private let accessTokenLifetime: Int

    public static let apnsKeyID = "ABC123DEFG"
    public static let apnsTeamID = "DEF123GHIJ"
    public static let apnsTopic = "app.posts.test"

    public var origin: String { "https://127.0.0.1:\(port)" }
    public var caFile: String { directory + "/ca.pem" }
    public var apnsKeyFile: String { directory + "/apns.p8" }
    public var fcmServiceAccountFile: String { directory + "/fcm.json" }
    public var vapidKeyFile: String { directory + "/vapid.pem" }
    private var readyFile: String { directory + "/ready" }
    private var recordFile: String { directory + "/records.jsonl" }
    private var rulesFile: String { directory + "/rules.json" }

    /// The environment that points every service of a server here (`WEBPUSH_ALLOW_PRIVATE`:
    /// the endpoints are on loopback).
    public var environment: [String: String] {
        ["APNS_KEY_FILE": apnsKeyFile, "APNS_KEY_ID": Self.apnsKeyID, "APNS_TEAM_ID": Self.apnsTeamID,
         "APNS_TOPIC": Self.apnsTopic, "APNS_URL": origin, "FCM_SERVICE_ACCOUNT_FILE": fcmServiceAccountFile, "FCM_URL": origin,
         "WEBPUSH_VAPID_KEY_FILE": vapidKeyFile, "WEBPUSH_SUBJECT": "mailto:ops@posts.test", "WEBPUSH_ALLOW_PRIVATE": "1",
         "PUSH_CA_FILE": caFile]
    }

    /// `accessTokenLifetime`: the `expires_in` of FCM access tokens (short, to see them renewed).
    public init(accessTokenLifetime: Int = 3600, subscriptions: Int = 4) throws {
        self.accessTokenLifetime = accessTokenLifetime
        directory = NSTemporaryDirectory() + "posts-push-services-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.subscriptionCount = subscriptions
        try start()
    }

    private let subscriptionCount: Int

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts the services (again, on the same port once they had one, with the same keys)
    /// and waits until they listen.
    public func start() throws {
        guard pid == 0 else { return }
        (pid, port) = try PythonService.start(PythonService.script("push_services.py"), [
            "--dir", directory, "--port", String(port), "--subscriptions", String(subscriptionCount),
            "--access-token-lifetime", String(accessTokenLifetime),
        ], readyFile: readyFile, log: directory + "/services.log", name: "the push services")
    }

    /// Stops the services (SIGTERM, then waits): their port refuses connections.
    public func stop() {
        PythonService.stop(pid)
        pid = 0
    }

    /// The browsers' subscriptions, as `PushSubscription.toJSON()` gives them (a `webpush`
    /// token each): the n-th's endpoint is `/wp/n`.
    public var subscriptions: [String] {
        guard let data = FileManager.default.contents(atPath: directory + "/subscriptions.json"),
              let list = try? JSONSerialization.jsonObject(with: data) as? [Any] else { return [] }
        return list.compactMap { entry in
            (try? JSONSerialization.data(withJSONObject: entry, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// Replaces the rules.
    public func answer(_ rules: [Rule]) throws {
        let list: [[String: Any]] = rules.map { rule in
            var object: [String: Any] = ["service": rule.service, "status": rule.status, "count": rule.count]
            if let token = rule.token { object["token"] = token }
            if let reason = rule.reason { object["reason"] = reason }
            if let retryAfter = rule.retryAfter { object["retry_after"] = retryAfter }
            return object
        }
        try JSONSerialization.data(withJSONObject: list).write(to: URL(fileURLWithPath: rulesFile + ".tmp"))
        _ = rename(rulesFile + ".tmp", rulesFile)
    }

    /// Every request answered so far, in order.
    public var requests: [Request] {
        guard let text = try? String(contentsOfFile: recordFile, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let service = object["service"] as? String else { return nil }
            return Request(service: service, connection: object["connection"] as? Int ?? 0, stream: object["stream"] as? Int ?? 0,
                           token: object["token"] as? String, status: object["status"] as? Int ?? 0,
                           payload: (object["payload"] as? [String: Any]).map(Self.sendable),
                           headers: object["headers"] as? [String: String] ?? [:],
                           credential: object["jwt"] as? String ?? object["access_token"] as? String)
        }
    }

    /// Connections the services accepted so far.
    public var connections: Int {
        guard let text = try? String(contentsOfFile: recordFile, encoding: .utf8) else { return 0 }
        return text.split(separator: "\n").filter { $0.contains(#""event": "connection""#) }.count
    }

    /// Waits until `condition` holds of the requests; nil if it did not within `timeout`.
    public func waitFor(timeout: Duration = .seconds(20), _ condition: ([Request]) -> Bool) -> [Request]? {
        eventuallyValue(timeout: timeout) {
            let requests = self.requests
            return condition(requests) ? requests : nil
        }
    }

    /// Accepted pushes of `service`.
    public func delivered(_ service: String) -> [Request] {
        requests.filter { $0.service == service && (200...201).contains($0.status) }
    }

    private static func sendable(_ object: [String: Any]) -> [String: any Sendable] {
        object.mapValues { value -> any Sendable in
            switch value {
            case let nested as [String: Any]: return sendable(nested)
            case let number as NSNumber: return number.intValue
            case let text as String: return text
            default: return "\(value)"
            }
        }
    }
}
