/// The body of `PUT` and `DELETE /api/me/push-tokens`: where one phone can be reached. A
/// missing or mistyped field of a well-formed body is 422 (a malformed body is 400, before
/// this); every field is checked here, before any SQL.
struct PushTokenInput: Decodable, Sendable {
    enum Platform: String, Sendable, CaseIterable {
        case apns, fcm, webpush
    }

    let platform: String?
    let token: String?
    let deviceID: String?

    private enum CodingKeys: String, CodingKey {
        case platform, token, deviceID = "device_id"
    }

    /// A Web Push subscription (its endpoint and keys) fits; an APNs or FCM token is far smaller.
    static let maxTokenBytes = 4096
    static let maxDeviceID = 200

    struct Valid: Sendable {
        let platform: Platform
        let token: String
        /// nil for none (an empty one is none too).
        let deviceID: String?
    }

    /// The fields checked (422 naming the first bad one). Tokens are kept exactly as sent:
    /// the receiver hands them to APNs or FCM, which compare them byte for byte.
    func validated() throws(APIError) -> Valid {
        guard let platform, let known = Platform(rawValue: platform) else {
            let accepted = Platform.allCases.map(\.rawValue).joined(separator: ", ")
            throw APIError.invalid(self.platform == nil ? "platform is required: one of \(accepted)"
                                                        : "platform must be one of \(accepted)")
        }
        guard let token, !token.allSatisfy(\.isWhitespace) else { throw APIError.invalid("token is required") }
        guard token.utf8.count <= Self.maxTokenBytes else {
            throw APIError.invalid("token is longer than \(Self.maxTokenBytes) bytes")
        }
        guard !Self.hasControlCharacters(token) else { throw APIError.invalid("token has control characters") }
        if let deviceID {
            guard deviceID.count <= Self.maxDeviceID else {
                throw APIError.invalid("device_id is longer than \(Self.maxDeviceID) characters")
            }
            guard !Self.hasControlCharacters(deviceID) else { throw APIError.invalid("device_id has control characters") }
        }
        return Valid(platform: known, token: token, deviceID: deviceID.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// C0 and C1 controls and DEL: no token has them, and a header or a log line must not.
    private static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }
}
