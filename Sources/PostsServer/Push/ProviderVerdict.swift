import Foundation

/// What a push service's answer means for the push and the device token (API.md "Push to
/// every device"), decided from the status, the `Retry-After` header and the error body
/// each service documents. Pure, so that every documented answer is tested without a
/// server.
enum ProviderVerdict: Equatable, Sendable {
    /// Accepted: the service will deliver it.
    case delivered
    /// The token is dead (the app was removed, the token is not this app's): it is deleted
    /// and gets nothing more.
    case removeToken(String)
    /// The credentials the server sends were refused as expired: new ones, then the same
    /// push again.
    case renewCredentials
    /// The service is busy or failing: the push is tried again later (`after` when it said).
    case retry(String, after: TimeInterval?)
    /// The push itself was refused and would be again (too large, malformed): it is dropped.
    case dropped(String)

    /// APNs (Apple's "Handling notification responses from APNs"): 200; 410 Unregistered;
    /// 400 BadDeviceToken or DeviceTokenNotForTopic; 403 ExpiredProviderToken; 429
    /// TooManyRequests; 500 InternalServerError; 503 ServiceUnavailable or Shutdown.
    static func apns(status: Int, body: [UInt8], retryAfter: String? = nil) -> ProviderVerdict {
        let reason = (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["reason"] as? String ?? "HTTP \(status)"
        switch (status, reason) {
        case (200, _): return .delivered
        case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"): return .removeToken(reason)
        case (403, "ExpiredProviderToken"): return .renewCredentials
        case (429, _), (500..., _): return .retry(reason, after: seconds(retryAfter))
        default: return .dropped(reason)
        }
    }

    /// FCM HTTP v1 (Firebase's "FCM error codes"): 200; 404 or `UNREGISTERED`; 400
    /// `INVALID_ARGUMENT` naming the token; 401 (the access token); 429
    /// `QUOTA_EXCEEDED` and 503 `UNAVAILABLE` with `Retry-After`; 500 `INTERNAL`.
    static func fcm(status: Int, body: [UInt8], retryAfter: String? = nil) -> ProviderVerdict {
        let error = (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["error"] as? [String: Any]
        let details = error?["details"] as? [[String: Any]] ?? []
        let code = details.compactMap { $0["errorCode"] as? String }.first ?? error?["status"] as? String ?? "HTTP \(status)"
        let message = error?["message"] as? String ?? ""
        switch status {
        case 200: return .delivered
        case 404: return .removeToken(code)
        case _ where code == "UNREGISTERED": return .removeToken(code)
        case 400 where code == "INVALID_ARGUMENT" && message.lowercased().contains("token"): return .removeToken(code)
        case 401: return .renewCredentials
        case 429, 500...: return .retry(code, after: seconds(retryAfter))
        default: return .dropped(message.isEmpty ? code : "\(code): \(message)")
        }
    }

    /// Web Push (RFC 8030 and the services' documents): 201 (200 and 202 too); 404 and 410
    /// for a subscription that is gone; 429 and 5xx later; 413 and other 4xx (a VAPID
    /// refusal among them) dropped.
    static func webPush(status: Int, retryAfter: String? = nil) -> ProviderVerdict {
        switch status {
        case 200...202: return .delivered
        case 404, 410: return .removeToken("HTTP \(status)")
        case 429, 500...: return .retry("HTTP \(status)", after: seconds(retryAfter))
        default: return .dropped("HTTP \(status)")
        }
    }

    /// `Retry-After` in seconds, as the services send it; nil for anything else.
    static func seconds(_ header: String?) -> TimeInterval? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return nil }
        if let seconds = Int(header), seconds >= 0 { return TimeInterval(seconds) }
        return nil
    }
}
