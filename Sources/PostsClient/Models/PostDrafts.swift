import Foundation

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

/// An image to attach to a post: JPEG, PNG, GIF or WebP (the server checks the bytes, 415
/// otherwise), at most 10 MiB.
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
}
