import Foundation
@testable import PostsServer
import Testing

/// The push providers' variables: each provider on when its variables are all there, a
/// clear refusal naming what is missing or wrong otherwise.
@Suite struct PushProviderSettingsTests {
    static func parse(_ variables: [String: String]) throws(Configuration.Invalid) -> PushProviderSettings {
        try PushProviderSettings.parse { variables[$0] }
    }

    static let apns = ["APNS_KEY_FILE": "/keys/AuthKey.p8", "APNS_KEY_ID": "ABC123DEFG", "APNS_TEAM_ID": "DEF123GHIJ",
                       "APNS_TOPIC": "com.example.app"]

    @Test func nothingSet_isNoProvider() throws {
        #expect(try Self.parse([:]).isEmpty)
    }

    @Test func eachProvider_isOnWithAllItsVariables() throws {
        var all = Self.apns
        all["FCM_SERVICE_ACCOUNT_FILE"] = "/keys/firebase.json"
        all["WEBPUSH_VAPID_KEY_FILE"] = "/keys/vapid.pem"
        all["WEBPUSH_SUBJECT"] = "mailto:ops@example.com"
        let settings = try Self.parse(all)
        #expect(settings.apns?.url == "https://api.push.apple.com" && settings.apns?.topic == "com.example.app")
        #expect(settings.fcm?.url == "https://fcm.googleapis.com" && settings.fcm?.serviceAccountFile == "/keys/firebase.json")
        #expect(settings.webPush?.subject == "mailto:ops@example.com")
        all["APNS_ENVIRONMENT"] = "sandbox"
        all["FCM_URL"] = "https://127.0.0.1:9443/"
        all["PUSH_CA_FILE"] = "/tmp/ca.pem"
        let test = try Self.parse(all)
        #expect(test.apns?.url == "https://api.sandbox.push.apple.com" && test.fcm?.url == "https://127.0.0.1:9443")
        #expect(test.caFile == "/tmp/ca.pem")
        all["APNS_URL"] = "https://127.0.0.1:8443"
        #expect(try Self.parse(all).apns?.url == "https://127.0.0.1:8443")
    }

    @Test func aProviderHalfConfigured_stopsTheStart_namingWhatIsMissing() {
        var partial = Self.apns
        partial["APNS_TOPIC"] = nil
        let cases: [([String: String], String)] = [
            (partial, "APNS_TOPIC"),
            (["APNS_ENVIRONMENT": "sandbox"], "APNS_KEY_FILE, APNS_KEY_ID, APNS_TEAM_ID, APNS_TOPIC"),
            (Self.apns.merging(["APNS_ENVIRONMENT": "staging"]) { $1 }, "production or sandbox"),
            (Self.apns.merging(["APNS_URL": "http://127.0.0.1:8443"]) { $1 }, "APNS_URL must be an https://"),
            (["FCM_URL": "https://127.0.0.1:9443"], "FCM_SERVICE_ACCOUNT_FILE"),
            (["FCM_SERVICE_ACCOUNT_FILE": "/k.json", "FCM_URL": "https://h/v1/projects"], "FCM_URL must be an https:// origin"),
            (["WEBPUSH_VAPID_KEY_FILE": "/v.pem"], "needs WEBPUSH_SUBJECT"),
            (["WEBPUSH_SUBJECT": "mailto:a@b.c"], "needs WEBPUSH_VAPID_KEY_FILE"),
            (["WEBPUSH_VAPID_KEY_FILE": "/v.pem", "WEBPUSH_SUBJECT": "ops@example.com"], "mailto: or https:"),
            (["PUSH_CA_FILE": "/ca.pem"], "none is configured"),
        ]
        for (variables, fragment) in cases {
            let error = #expect(throws: Configuration.Invalid.self) { try Self.parse(variables) }
            #expect(error?.description.contains(fragment) == true, "\(variables): \(error?.description ?? "")")
        }
    }

    /// The key files are read when the server starts: one missing or not a key stops it,
    /// naming the variable.
    @Test func keyFilesThatAreNotKeys_stopTheStart() throws {
        let directory = NSTemporaryDirectory() + "push-keys-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let garbage = directory + "/garbage"
        try "not a key".write(toFile: garbage, atomically: true, encoding: .utf8)
        let cases: [([String: String], String)] = [
            (Self.apns.merging(["APNS_KEY_FILE": directory + "/missing.p8"]) { $1 }, "APNS_KEY_FILE names no readable file"),
            (Self.apns.merging(["APNS_KEY_FILE": garbage]) { $1 }, "APNS_KEY_FILE is not an APNs auth key"),
            (["FCM_SERVICE_ACCOUNT_FILE": garbage], "FCM_SERVICE_ACCOUNT_FILE is not JSON"),
            (["WEBPUSH_VAPID_KEY_FILE": garbage, "WEBPUSH_SUBJECT": "mailto:ops@example.com"], "WEBPUSH_VAPID_KEY_FILE is not a P-256"),
            (["WEBPUSH_VAPID_KEY_FILE": garbage, "WEBPUSH_SUBJECT": "mailto:ops@example.com", "PUSH_CA_FILE": directory + "/none"],
             "WEBPUSH_VAPID_KEY_FILE is not a P-256"),
        ]
        for (variables, fragment) in cases {
            let error = #expect(throws: Configuration.Invalid.self) { _ = try DirectPush(settings: try Self.parse(variables)) }
            #expect(error?.description.contains(fragment) == true, "\(variables): \(error?.description ?? "")")
        }
        #expect(try DirectPush(settings: Self.parse([:])) == nil)
    }
}
