import Foundation

/// The push services an instance sends to directly (API.md "Push to every device"), parsed
/// without I/O: APNs (`APNS_KEY_FILE`, `APNS_KEY_ID`, `APNS_TEAM_ID`, `APNS_TOPIC`,
/// `APNS_ENVIRONMENT`, `APNS_URL`), FCM (`FCM_SERVICE_ACCOUNT_FILE`, `FCM_URL`), Web Push
/// (`WEBPUSH_VAPID_KEY_FILE`, `WEBPUSH_SUBJECT`) and `PUSH_CA_FILE`. Each provider is nil
/// when none of its variables is set; one set without the rest it needs stops the start,
/// naming what is missing. The files are read when the providers start.
public struct PushProviderSettings: Sendable, Equatable {
    public struct APNs: Sendable, Equatable {
        public var keyFile: String
        public var keyID: String
        public var teamID: String
        /// The app's bundle id: `apns-topic`.
        public var topic: String
        /// `https://api.push.apple.com`, the sandbox's, or `APNS_URL`.
        public var url: String
    }

    public struct FCM: Sendable, Equatable {
        public var serviceAccountFile: String
        /// `https://fcm.googleapis.com` or `FCM_URL`.
        public var url: String
    }

    public struct WebPush: Sendable, Equatable {
        public var vapidKeyFile: String
        /// A `mailto:` or `https:` contact, the VAPID token's `sub`.
        public var subject: String
        /// `WEBPUSH_ALLOW_PRIVATE=1`: endpoints at private and loopback addresses are pushed
        /// to (a test's push service); otherwise only public ones, since users name them.
        public var allowsPrivatePeers = false
    }

    public var apns: APNs?
    public var fcm: FCM?
    public var webPush: WebPush?
    /// Extra trusted CA certificates (PEM) for the providers' TLS: test servers.
    public var caFile: String?

    public var isEmpty: Bool { apns == nil && fcm == nil && webPush == nil }

    static let apnsProduction = "https://api.push.apple.com"
    static let apnsSandbox = "https://api.sandbox.push.apple.com"
    static let fcmDefault = "https://fcm.googleapis.com"

    public static func parse(_ value: (String) -> String?) throws(Configuration.Invalid) -> PushProviderSettings {
        var settings = PushProviderSettings()
        let apnsNames = ["APNS_KEY_FILE", "APNS_KEY_ID", "APNS_TEAM_ID", "APNS_TOPIC"]
        if apnsNames.contains(where: { value($0) != nil }) || value("APNS_ENVIRONMENT") != nil || value("APNS_URL") != nil {
            let missing = apnsNames.filter { value($0) == nil }
            guard missing.isEmpty else {
                throw Configuration.Invalid(description: "APNs needs \(missing.joined(separator: ", ")) too "
                    + "(the .p8 auth key from Apple's developer account, its key id, your team id and the app's bundle id)")
            }
            // They go into the token and a header as they are.
            for name in ["APNS_KEY_ID", "APNS_TEAM_ID", "APNS_TOPIC"] where value(name)!.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) {
                throw Configuration.Invalid(description: "\(name) must be printable ASCII without spaces")
            }
            let host: String
            switch value("APNS_ENVIRONMENT")?.lowercased() ?? "production" {
            case "production": host = apnsProduction
            case "sandbox", "development": host = apnsSandbox
            case let other: throw Configuration.Invalid(description: "APNS_ENVIRONMENT must be production or sandbox, not \"\(other)\"")
            }
            settings.apns = APNs(keyFile: value("APNS_KEY_FILE")!, keyID: value("APNS_KEY_ID")!, teamID: value("APNS_TEAM_ID")!,
                                 topic: value("APNS_TOPIC")!, url: try origin(value("APNS_URL") ?? host, variable: "APNS_URL"))
        }
        if let file = value("FCM_SERVICE_ACCOUNT_FILE") {
            settings.fcm = FCM(serviceAccountFile: file, url: try origin(value("FCM_URL") ?? fcmDefault, variable: "FCM_URL"))
        } else if value("FCM_URL") != nil {
            throw Configuration.Invalid(description: "FCM_URL needs FCM_SERVICE_ACCOUNT_FILE (Firebase's service account key)")
        }
        switch (value("WEBPUSH_VAPID_KEY_FILE"), value("WEBPUSH_SUBJECT")) {
        case (nil, nil):
            if value("WEBPUSH_ALLOW_PRIVATE") != nil {
                throw Configuration.Invalid(description: "WEBPUSH_ALLOW_PRIVATE needs WEBPUSH_VAPID_KEY_FILE and WEBPUSH_SUBJECT")
            }
        case (let file?, let subject?):
            let lowered = subject.lowercased()
            guard lowered.hasPrefix("mailto:") || lowered.hasPrefix("https://") else {
                throw Configuration.Invalid(description: "WEBPUSH_SUBJECT must be a mailto: or https: contact, not \"\(subject)\"")
            }
            settings.webPush = WebPush(vapidKeyFile: file, subject: subject, allowsPrivatePeers: value("WEBPUSH_ALLOW_PRIVATE") == "1")
        case (nil, _): throw Configuration.Invalid(description: "WEBPUSH_SUBJECT needs WEBPUSH_VAPID_KEY_FILE (a P-256 private key, PEM)")
        case (_, nil): throw Configuration.Invalid(description: "WEBPUSH_VAPID_KEY_FILE needs WEBPUSH_SUBJECT (a mailto: or https: contact)")
        }
        settings.caFile = value("PUSH_CA_FILE")
        if settings.caFile != nil && settings.isEmpty {
            throw Configuration.Invalid(description: "PUSH_CA_FILE is for the push providers' TLS, and none is configured")
        }
        return settings
    }

    /// An `https://host[:port]` origin, without a trailing slash; the path is the provider's.
    private static func origin(_ text: String, variable: String) throws(Configuration.Invalid) -> String {
        guard let components = URLComponents(string: text), components.scheme?.lowercased() == "https",
              let host = components.host, !host.isEmpty, components.path.isEmpty || components.path == "/",
              components.query == nil, components.fragment == nil, components.user == nil else {
            throw Configuration.Invalid(description: "\(variable) must be an https:// origin like https://127.0.0.1:8443, not \"\(text)\"")
        }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }
}
