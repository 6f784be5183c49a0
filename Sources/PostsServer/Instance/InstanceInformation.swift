import Foundation

/// Who runs this server and where their terms are (API.md "Instance information"):
/// `INSTANCE_NAME`, `CONTACT_EMAIL`, `TERMS_URL`, `PRIVACY_URL`, checked at start without
/// I/O. App Store guideline 1.2 asks that an app with user content lets its users reach the
/// operator: apps show these in their settings and report screens.
public struct InstanceInformation: Sendable, Equatable {
    /// `INSTANCE_NAME`: what an app calls this server.
    public var name = InstanceInformation.defaultName
    /// `CONTACT_EMAIL`: where users reach the operator (abuse reports, account questions).
    public var contactEmail: String?
    /// `TERMS_URL`, `PRIVACY_URL`: absolute http(s) URLs.
    public var termsURL: String?
    public var privacyURL: String?

    /// The name without `INSTANCE_NAME`: the software's, which says no more than the
    /// `Server` an app was pointed at.
    public static let defaultName = "posts-server"
    /// A name is a label in an app's settings screen, not a paragraph.
    static let maxNameCharacters = 100

    public init() {}

    /// The settings from their variables (nil: unset); an error naming the variable when a
    /// value is malformed, so a typo stops the start instead of being published.
    public static func parse(name: String?, contactEmail: String?, termsURL: String?,
                             privacyURL: String?) throws(Configuration.Invalid) -> InstanceInformation {
        var information = InstanceInformation()
        if let name {
            guard !name.allSatisfy(\.isWhitespace), name.count <= maxNameCharacters,
                  !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw Configuration.Invalid(description: "INSTANCE_NAME must be a name of at most \(maxNameCharacters) "
                    + "characters, not blank and without control characters (line breaks, tabs)")
            }
            information.name = name
        }
        if let contactEmail {
            guard EmailAddress.isPlausibleMailbox(contactEmail) else {
                throw Configuration.Invalid(description: "CONTACT_EMAIL must be one address like abuse@example.com "
                    + "(no name, no spaces, no angle brackets)")
            }
            information.contactEmail = contactEmail
        }
        information.termsURL = try termsURL.map { url throws(Configuration.Invalid) in try publicURL(url, variable: "TERMS_URL") }
        information.privacyURL = try privacyURL.map { url throws(Configuration.Invalid) in try publicURL(url, variable: "PRIVACY_URL") }
        return information
    }

    /// An absolute http(s) URL that every user sees: no user or password in it.
    private static func publicURL(_ text: String, variable: String) throws(Configuration.Invalid) -> String {
        let (_, parts) = try HTTPURLSetting.parse(text, variable: variable)
        guard parts.user == nil, parts.password == nil else {
            throw HTTPURLSetting.invalid(variable, "has a user or password, which every user would see")
        }
        return text
    }

    /// What this server supports that a client may adapt to, sorted: the one place a
    /// feature is named. Only what varies from one server to another is listed; what every
    /// server of a version does is implied by `version`.
    public static func features(of configuration: Configuration) -> [String] {
        var features: [String] = []
        // The /api/dev routes answer (AUTH_MODE=trust): UI tests sign in through the mailbox.
        if configuration.authMode == .trust { features.append("dev") }
        // The built-in mailer delivers sign-in codes. Without it an external mailer may
        // still deliver them from the outbox table: its absence does not mean no mail.
        if configuration.mail != nil { features.append("mail") }
        // New notifications are pushed to registered tokens: registering one is worthwhile.
        if configuration.push != nil || !configuration.pushProviders.isEmpty { features.append("push") }
        // Images live in an S3-compatible bucket: every instance serves every image, and
        // with S3_PUBLIC_URL they may come from a CDN (a client follows the 302).
        if configuration.storage?.location.isS3 == true { features.append("s3") }
        // ActivityPub (FEDERATION=on): `@user@domain` profiles resolve, remote follows are pending.
        if configuration.federation != nil { features.append("federation") }
        return features.sorted()
    }
}
