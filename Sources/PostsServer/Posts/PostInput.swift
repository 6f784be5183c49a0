import Foundation
import HTTP

/// What a client sends to create a post (`POST /api/posts`, the firefly form), validated:
/// API.md's lengths are Swift characters after trimming (422 outside them).
struct PostDraft: Sendable {
    let title: String
    let summary: String
    let body: String
    let parentID: Int64?
    let timezone: String
    let locationTag: String?
    let aiGenerated: Bool
    let image: UploadedFile?

    /// A post made by the server for someone (a remote account's Note), its texts already cut to size.
    init(title: String, summary: String, body: String, parentID: Int64?) {
        self.title = title
        self.summary = summary
        self.body = body
        self.parentID = parentID
        timezone = "UTC"
        locationTag = nil
        aiGenerated = false
        image = nil
    }

    init(_ fields: BodyFields, image: UploadedFile?) throws(APIError) {
        title = try PostText.required(fields, "title", max: PostText.maxTitle)
        summary = try PostText.required(fields, "summary", max: PostText.maxSummary)
        body = try PostText.required(fields, "body", max: PostText.maxBody)
        parentID = try PostText.postID(fields, "parent_id")
        timezone = try PostText.timezone(fields)
        locationTag = try PostText.locationTag(fields)
        aiGenerated = try fields.bool("ai_generated") ?? false
        self.image = image
    }
}

/// What a client sends to change a post (`PATCH /api/posts/<id>`, `POST /api/posts/update`):
/// any of title, summary, body, location_tag and image.
struct PostEdits: Sendable {
    let title: String?
    let summary: String?
    let body: String?
    /// nil: leave it; `.some(nil)`: clear it (JSON null or an empty value).
    let locationTag: String??
    let image: UploadedFile?

    /// New texts the server was given for someone (a remote account's edited Note), cut to size already.
    init(title: String?, summary: String?, body: String?) {
        self.title = title
        self.summary = summary
        self.body = body
        locationTag = nil
        image = nil
    }

    init(_ fields: BodyFields, image: UploadedFile?) throws(APIError) {
        title = try PostText.optional(fields, "title", max: PostText.maxTitle)
        summary = try PostText.optional(fields, "summary", max: PostText.maxSummary)
        body = try PostText.optional(fields, "body", max: PostText.maxBody)
        locationTag = fields.contains("location_tag") ? .some(try PostText.locationTag(fields)) : nil
        self.image = image
    }
}

/// The field rules both share.
enum PostText {
    static let maxTitle = 200
    static let maxSummary = 500
    static let maxBody = 20_000
    static let maxLocationTag = 200
    static let maxTimezone = 64

    static func required(_ fields: BodyFields, _ key: String, max: Int) throws(APIError) -> String {
        guard let text = try optional(fields, key, max: max) else {
            throw APIError.invalid("\(key) is required")
        }
        return text
    }

    /// The trimmed text if the field is there: 1...max characters.
    static func optional(_ fields: BodyFields, _ key: String, max: Int) throws(APIError) -> String? {
        guard let raw = try fields.string(key) else { return nil }
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...max).contains(text.count) else {
            throw APIError.invalid("\(key) must be 1 to \(max) characters")
        }
        return text
    }

    /// A post id, or nil for none (absent, null, or an empty form value).
    static func postID(_ fields: BodyFields, _ key: String) throws(APIError) -> Int64? {
        guard let id = try fields.integer(key) else { return nil }
        guard id > 0 else { throw APIError.invalid("\(key) must be a post id") }
        return id
    }

    /// An IANA name such as `Europe/Paris` (what iOS's `TimeZone.current.identifier` gives);
    /// `UTC` when absent.
    static func timezone(_ fields: BodyFields) throws(APIError) -> String {
        guard let raw = try fields.string("timezone") else { return "UTC" }
        let name = raw.trimmingCharacters(in: .whitespaces)
        if name.isEmpty { return "UTC" }
        guard name.utf8.count <= maxTimezone, TimeZone(identifier: name) != nil else {
            throw APIError.invalid("timezone must be a time zone name such as Europe/Paris")
        }
        return name
    }

    static func locationTag(_ fields: BodyFields) throws(APIError) -> String? {
        guard let raw = try fields.string("location_tag") else { return nil }
        let tag = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        if tag.isEmpty { return nil }
        guard tag.count <= maxLocationTag else {
            throw APIError.invalid("location_tag must be at most \(maxLocationTag) characters")
        }
        return tag
    }
}
