import Foundation
import HTTP

/// What every ActivityPub document of ours shares: the media type, the contexts, the
/// public collection, and the ids we publish (`FederationURLs`).
enum ActivityPub {
    static let contentType = "application/activity+json; charset=utf-8"
    static let publicCollection = "https://www.w3.org/ns/activitystreams#Public"
    static let contexts: [String] = ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"]

    /// Whether an `Accept` (or `Content-Type`) names ActivityStreams JSON: `activity+json`
    /// or `ld+json` with the ActivityStreams profile.
    static func names(_ mediaType: String?) -> Bool {
        guard let mediaType = mediaType?.lowercased() else { return false }
        return mediaType.contains("application/activity+json")
            || (mediaType.contains("application/ld+json") && mediaType.contains("activitystreams"))
    }

    /// The document as JSON bytes, keys sorted. Written here rather than by
    /// JSONSerialization, which on Linux writes a Swift `false` as `0`.
    static func encode(_ object: [String: Any]) -> [UInt8] {
        var out: [UInt8] = []
        write(object, to: &out)
        return out
    }

    private static func write(_ value: Any, to out: inout [UInt8]) {
        switch value {
        case let text as String:
            JSONText.appendQuoted(text, to: &out)
        case let flag as Bool where type(of: value) == Bool.self:
            out += (flag ? "true" : "false").utf8
        case let number as Int:
            out += String(number).utf8
        case let number as Int64:
            out += String(number).utf8
        case let number as Double:
            out += (number.isFinite ? String(number) : "null").utf8
        case let object as [String: Any]:
            out.append(UInt8(ascii: "{"))
            for (index, key) in object.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONText.appendQuoted(key, to: &out)
                out.append(UInt8(ascii: ":"))
                write(object[key]!, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case let list as [Any]:
            out.append(UInt8(ascii: "["))
            for (index, element) in list.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(element, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case let number as NSNumber:
            out += number.stringValue.utf8
        default:
            out += "null".utf8
        }
    }

    /// `object` with the contexts, as our answer.
    static func response(_ object: [String: Any], status: HTTPStatus = .ok) -> Response {
        var document = object
        document["@context"] = contexts
        return Response(status: status, headers: HTTPHeaders([("Content-Type", contentType)]), body: encode(document))
    }
}

/// The ids this instance publishes, all under `PUBLIC_URL`. An actor's id is its user's
/// number, so it survives a change of username (`/users/<username>` serves it too).
struct FederationURLs: Sendable {
    let origin: String
    /// `@user@<domain>`.
    let domain: String

    init(_ settings: FederationSettings) {
        origin = settings.origin
        domain = settings.domain
    }

    var instanceActor: String { "\(origin)/actor" }
    var instanceKeyID: String { "\(instanceActor)#main-key" }
    var sharedInbox: String { "\(origin)/inbox" }
    func actor(_ user: Int64) -> String { "\(origin)/ap/users/\(user)" }
    func keyID(_ user: Int64) -> String { "\(actor(user))#main-key" }
    func inbox(_ user: Int64) -> String { "\(actor(user))/inbox" }
    func outbox(_ user: Int64) -> String { "\(actor(user))/outbox" }
    func followers(_ user: Int64) -> String { "\(actor(user))/followers" }
    func following(_ user: Int64) -> String { "\(actor(user))/following" }
    func profilePage(_ username: String) -> String { "\(origin)/users/\(username)" }
    func post(_ id: Int64) -> String { "\(origin)/posts/\(id)" }
    func comment(_ id: UUID) -> String { "\(origin)/comments/\(id.uuidString.lowercased())" }
    /// A hashtag's page: its API answer (`GET /api/tags/<name>`), the one this server has.
    func tag(_ name: String) -> String { "\(origin)/api/tags/\(name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name)" }
    /// An activity of ours that has no object of its own to be named after.
    func activity(_ kind: String, _ key: String) -> String { "\(origin)/activities/\(kind)/\(key)" }

    /// What one of our ids names, if it is one of ours.
    enum Local: Equatable {
        case actor(Int64)
        case post(Int64)
        case comment(UUID)
    }

    func local(_ id: String) -> Local? {
        guard id.hasPrefix(origin + "/") else { return nil }
        let path = id.dropFirst(origin.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard path.count >= 2 else { return nil }
        switch (path[0], path.count) {
        case ("posts", 2): return Int64(path[1]).map(Local.post)
        case ("comments", 2): return UUID(uuidString: String(path[1])).map(Local.comment)
        case ("ap", 3) where path[1] == "users": return Int64(path[2]).map(Local.actor)
        default: return nil
        }
    }
}
