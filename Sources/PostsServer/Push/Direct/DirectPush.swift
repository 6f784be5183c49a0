import Foundation
import HTTP

/// The push services this instance sends to directly (API.md "Push to every device"), made
/// at start from `PushProviderSettings`: the key files are read and checked there (a bad
/// one stops the start, naming it), and APNs needs a libcurl with HTTP/2. No service is
/// contacted at start: one unreachable then costs retries, never the start.
struct DirectPush: Sendable {
    private struct APNsSetup: Sendable {
        let settings: PushProviderSettings.APNs
        let keyPEM: String
    }

    private struct FCMSetup: Sendable {
        let settings: PushProviderSettings.FCM
        let account: FCMServiceAccount
    }

    private let apns: APNsSetup?
    private let fcm: FCMSetup?
    private let vapid: VAPID?
    private let allowsPrivatePeers: Bool
    /// libcurl's CA bundle with `PUSH_CA_FILE`'s certificates added; nil: libcurl's own.
    private let trustedCertificates: [UInt8]?
    let metrics = PushMetrics()

    /// nil when no service is configured.
    init?(settings: PushProviderSettings) throws(Configuration.Invalid) {
        guard !settings.isEmpty else { return nil }
        if let apns = settings.apns {
            guard CurlMultiplexer.supportsHTTP2 else {
                throw Configuration.Invalid(description: "APNs speaks only HTTP/2, and this libcurl was built without it "
                    + "(install a libcurl with nghttp2, such as Debian's libcurl4-openssl-dev's)")
            }
            let pem = try Self.text(of: apns.keyFile, variable: "APNS_KEY_FILE")
            do {
                _ = try APNsProviderToken(pem: pem, keyID: apns.keyID, teamID: apns.teamID)
            } catch {
                throw Configuration.Invalid(description: "APNS_KEY_FILE is not an APNs auth key (a .p8 file: a P-256 private key in PEM)")
            }
            self.apns = APNsSetup(settings: apns, keyPEM: pem)
        } else {
            apns = nil
        }
        if let fcm = settings.fcm {
            let json = try Self.text(of: fcm.serviceAccountFile, variable: "FCM_SERVICE_ACCOUNT_FILE")
            do {
                self.fcm = FCMSetup(settings: fcm, account: try FCMServiceAccount(json: Array(json.utf8)))
            } catch {
                throw Configuration.Invalid(description: error.description)
            }
        } else {
            fcm = nil
        }
        if let webPush = settings.webPush {
            let pem = try Self.text(of: webPush.vapidKeyFile, variable: "WEBPUSH_VAPID_KEY_FILE")
            do {
                vapid = try VAPID(pem: pem, subject: webPush.subject)
            } catch {
                throw Configuration.Invalid(description: "WEBPUSH_VAPID_KEY_FILE is not a P-256 private key in PEM "
                    + "(make one with: openssl ecparam -name prime256v1 -genkey -noout -out vapid.pem)")
            }
            allowsPrivatePeers = webPush.allowsPrivatePeers
        } else {
            vapid = nil
            allowsPrivatePeers = false
        }
        if let file = settings.caFile {
            trustedCertificates = CurlMultiplexer.bundle(adding: Array(try Self.text(of: file, variable: "PUSH_CA_FILE").utf8))
        } else {
            trustedCertificates = nil
        }
    }

    /// The platforms whose tokens are pushed here rather than to the webhook.
    var platforms: [PushTokenInput.Platform] {
        (apns != nil ? [.apns] : []) + (fcm != nil ? [.fcm] : []) + (vapid != nil ? [.webpush] : [])
    }

    /// `applicationServerKey` for the apps' `pushManager.subscribe` (`/api/instance`).
    var webPushPublicKey: String? { vapid?.publicKey }

    /// Web Push subscriptions are checked on `PUT /api/me/push-tokens` once it is configured.
    var validatesWebPush: Bool { vapid != nil }

    /// Whether a subscription's endpoint may be pushed to by its address (a literal one;
    /// a name is judged on the connected socket's address when sent).
    func allowsEndpoint(_ endpoint: URL) -> Bool {
        guard !allowsPrivatePeers, let host = endpoint.host else { return true }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare.lowercased() == "localhost" { return false }
        return IPAddress(bare).map(\.isGloballyRoutable) ?? true
    }

    /// The `push.send` kind's place in the job runner: one handler, so one connection to
    /// each service.
    var worker: JobWorker {
        let setup = self
        return JobWorker(kind: .pushSend, makeHandler: { cancellation in
            var providers: [any PushProvider] = []
            if let apns = setup.apns { providers.append(try APNsSender(settings: apns.settings, keyPEM: apns.keyPEM)) }
            if let fcm = setup.fcm { providers.append(FCMSender(settings: fcm.settings, account: fcm.account)) }
            if let vapid = setup.vapid { providers.append(WebPushSender(vapid: vapid, allowsPrivatePeers: setup.allowsPrivatePeers)) }
            return DirectPushDelivery(providers: providers,
                                      connections: try CurlMultiplexer(trustedCertificates: setup.trustedCertificates, cancellation: cancellation),
                                      metrics: setup.metrics)
        })
    }

    private static func text(of file: String, variable: String) throws(Configuration.Invalid) -> String {
        guard let data = FileManager.default.contents(atPath: file), let text = String(data: data, encoding: .utf8) else {
            throw Configuration.Invalid(description: "\(variable) names no readable file: \(file)")
        }
        return text
    }
}
