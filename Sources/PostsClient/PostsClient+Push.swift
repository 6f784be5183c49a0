import Foundation

/// Where the server's push webhook can reach this device (API.md "Push"): the app registers
/// the token APNs or FCM gave it after signing in, and removes it before signing out.
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
