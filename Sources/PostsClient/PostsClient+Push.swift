import Foundation

/// Where the server can reach this device (API.md "Push" and "Push to every device"): the
/// app registers the token APNs or FCM gave it (or a browser's Web Push subscription) after
/// signing in, and removes it before signing out. The server pushes to APNs, FCM and Web
/// Push itself when configured, or through its webhook.
extension PostsClient {
    /// Registers this device's token for the signed-in account; calling it again (each
    /// launch, say) is harmless. A token another account registered on this device moves to
    /// this one. An account keeps its 20 most recently registered tokens.
    @discardableResult
    public func registerPushToken(_ token: String, platform: PushPlatform, deviceID: String? = nil) async throws -> PushToken {
        let request = try APIRequest.json("PUT", "/api/me/push-tokens", [
            ("platform", .string(platform.rawValue)), ("token", .string(token)),
            ("device_id", deviceID.map(JSONValue.string) ?? .null),
        ])
        return try await send(request, as: PushTokenEnvelope.self).pushToken
    }

    /// Registers a browser's Web Push subscription (what `PushSubscription.toJSON()` gives:
    /// its endpoint and its `p256dh` and `auth` keys, base64url), made with the instance's
    /// `webPushPublicKey` as `applicationServerKey`. Remove it with `removePushToken` and
    /// the `token` of the answer.
    @discardableResult
    public func registerWebPushSubscription(endpoint: URL, p256dh: String, auth: String,
                                            deviceID: String? = nil) async throws -> PushToken {
        let subscription = try JSONSerialization.data(withJSONObject: [
            "endpoint": endpoint.absoluteString, "keys": ["p256dh": p256dh, "auth": auth],
        ], options: [.sortedKeys, .withoutEscapingSlashes])
        return try await registerPushToken(String(decoding: subscription, as: UTF8.self), platform: .webpush, deviceID: deviceID)
    }

    /// Stops pushes to this token; false when the account had no such token (already
    /// removed, or moved to another account).
    @discardableResult
    public func removePushToken(_ token: String, platform: PushPlatform) async throws -> Bool {
        let request = try APIRequest.json("DELETE", "/api/me/push-tokens", [
            ("platform", .string(platform.rawValue)), ("token", .string(token)),
        ])
        return try await send(request, as: RemovedEnvelope.self).removed
    }
}

/// The push service a token belongs to.
public struct PushPlatform: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Apple Push Notification service: the device token as lowercase hex.
    public static let apns = PushPlatform(rawValue: "apns")
    /// Firebase Cloud Messaging: the registration token.
    public static let fcm = PushPlatform(rawValue: "fcm")
    /// A Web Push subscription, as its JSON.
    public static let webpush = PushPlatform(rawValue: "webpush")
}

/// A registered token, as the server stored it.
public struct PushToken: Codable, Sendable, Equatable {
    public let platform: PushPlatform
    public let token: String
    public let deviceID: String?
    /// When it was last registered.
    public let createdAt: Date

    enum CodingKeys: String, CodingKey {
        case platform, token
        case deviceID = "device_id"
        case createdAt = "created_at"
    }
}

struct PushTokenEnvelope: Decodable {
    let pushToken: PushToken

    enum CodingKeys: String, CodingKey { case pushToken = "push_token" }
}

struct RemovedEnvelope: Decodable { let removed: Bool }
