import Foundation

// What the client sends: drafts and edits, only the fields set go on the wire.

/// What `createPost` sends. Title 1…200, summary 1…500, body 1…20,000 characters after
/// trimming (422 otherwise); the parent must exist (404).
public struct NewPost: Sendable, Equatable {
    public var title: String
    public var summary: String
    public var body: String
    public var parentID: Int?
    /// An IANA name; the device's own by default, as the firefly app sends it.
    public var timezone: String
    public var locationTag: String?
    public var aiGenerated: Bool

    public init(title: String, summary: String, body: String, parentID: Int? = nil,
                timezone: String = TimeZone.current.identifier, locationTag: String? = nil,
                aiGenerated: Bool = false) {
        self.title = title
        self.summary = summary
        self.body = body
        self.parentID = parentID
        self.timezone = timezone
        self.locationTag = locationTag
        self.aiGenerated = aiGenerated
    }

    var fields: [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = [("title", .string(title)), ("summary", .string(summary)),
                                              ("body", .string(body)), ("timezone", .string(timezone)),
                                              ("ai_generated", .bool(aiGenerated))]
        if let parentID { fields.append(("parent_id", .int(parentID))) }
        if let locationTag { fields.append(("location_tag", .string(locationTag))) }
        return fields
    }
}

/// What `updatePost` changes: only the fields that are set are sent.
public struct PostEdits: Sendable, Equatable {
    public var title: String?
    public var summary: String?
    public var body: String?
    public var locationTag: Clearable<String>?

    public init(title: String? = nil, summary: String? = nil, body: String? = nil,
                locationTag: Clearable<String>? = nil) {
        self.title = title
        self.summary = summary
        self.body = body
        self.locationTag = locationTag
    }

    var fields: [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = []
        if let title { fields.append(("title", .string(title))) }
        if let summary { fields.append(("summary", .string(summary))) }
        if let body { fields.append(("body", .string(body))) }
        if let locationTag { fields.append(("location_tag", locationTag.json)) }
        return fields
    }
}

/// An image to attach to a post or make an avatar: JPEG, PNG, GIF, WebP or HEIC (the
/// server goes by the bytes, never the type or name given: 415 for anything else or a
/// damaged image), at most 10 MiB (413), 40 megapixels and 8,192 px on a side (422). The
/// server stores it made again: upright, sRGB, without metadata (no GPS position), HEIC as
/// JPEG.
public struct ImageUpload: Sendable, Equatable {
    public var data: Data
    public var filename: String
    public var contentType: String

    public init(data: Data, filename: String, contentType: String) {
        self.data = data
        self.filename = filename
        self.contentType = contentType
    }

    public static func jpeg(_ data: Data, filename: String = "image.jpg") -> ImageUpload {
        ImageUpload(data: data, filename: filename, contentType: "image/jpeg")
    }

    public static func png(_ data: Data, filename: String = "image.png") -> ImageUpload {
        ImageUpload(data: data, filename: filename, contentType: "image/png")
    }

    /// What iPhones take; stored as JPEG.
    public static func heic(_ data: Data, filename: String = "image.heic") -> ImageUpload {
        ImageUpload(data: data, filename: filename, contentType: "image/heic")
    }
}

/// What `updateProfile(_:)` changes: only the fields that are set are sent.
public struct ProfileUpdate: Sendable, Equatable {
    /// 3 to 30 of `[a-z0-9_.]`, unique ignoring case (409 when taken).
    public var username: String?
    public var fullName: String?
    public var bio: String?
    public var avatarURL: Clearable<String>?

    public init(username: String? = nil, fullName: String? = nil, bio: String? = nil,
                avatarURL: Clearable<String>? = nil) {
        self.username = username
        self.fullName = fullName
        self.bio = bio
        self.avatarURL = avatarURL
    }

    var fields: [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = []
        if let username { fields.append(("username", .string(username))) }
        if let fullName { fields.append(("full_name", .string(fullName))) }
        if let bio { fields.append(("bio", .string(bio))) }
        if let avatarURL { fields.append(("avatar_url", avatarURL.json)) }
        return fields
    }
}

/// A new value for a field that may also be emptied: on the wire, the value or `null`.
/// Leaving the field alone is the absence of a `Clearable` (an optional one set to nil).
public enum Clearable<Value: Sendable & Equatable>: Sendable, Equatable {
    case set(Value)
    case clear
}

extension Clearable where Value == String {
    var json: JSONValue {
        switch self {
        case .set(let text): .string(text)
        case .clear: .null
        }
    }
}
