import Foundation

/// Another server's actor as its document says (Mastodon's `Person` shape), checked before
/// anything of it is stored: an http(s) id on the host it was fetched from, a username, an
/// inbox, and a key the actor owns. Pure: JSON in, a value or a refusal out.
struct RemoteActorDocument: Equatable, Sendable {
    let uri: String
    /// host[:port] of the id, lowercased.
    let domain: String
    let username: String
    let name: String
    let summary: String
    let iconURL: String?
    let inbox: String
    let sharedInbox: String?
    let followers: String?
    let url: String?
    let keyID: String
    let publicKeyPEM: String

    static let actorTypes: Set<String> = ["Person", "Service", "Application", "Group", "Organization"]

    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// `fetchedFrom`: the URL the document came from (after redirects): its host must be
    /// the id's, so a server speaks only for its own actors.
    init(json object: [String: Any], fetchedFrom: String) throws(Refusal) {
        guard let uri = object["id"] as? String, let domain = Self.domain(of: uri) else { throw Refusal(description: "the actor has no http(s) id") }
        guard Self.domain(of: fetchedFrom) == domain else {
            throw Refusal(description: "the actor \(uri) was served by another host (\(fetchedFrom))")
        }
        guard let type = object["type"] as? String, Self.actorTypes.contains(type) else {
            throw Refusal(description: "\(uri) is not an actor")
        }
        guard let username = object["preferredUsername"] as? String, (1...100).contains(username.count),
              username.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || "_.-".unicodeScalars.contains($0) }) else {
            throw Refusal(description: "the actor \(uri) has no usable preferredUsername")
        }
        guard let inbox = object["inbox"] as? String, Self.domain(of: inbox) != nil else {
            throw Refusal(description: "the actor \(uri) has no inbox")
        }
        guard let key = object["publicKey"] as? [String: Any] ?? (object["publicKey"] as? [[String: Any]])?.first,
              let keyID = key["id"] as? String, let pem = key["publicKeyPem"] as? String,
              (key["owner"] as? String).map({ $0 == uri }) ?? true, Self.domain(of: keyID) == domain else {
            throw Refusal(description: "the actor \(uri) has no key of its own")
        }
        self.uri = uri
        self.domain = domain
        self.username = username
        name = String((object["name"] as? String ?? "").prefix(100))
        summary = String(NoteContent.plainText(fromHTML: object["summary"] as? String ?? "", limit: 500))
        iconURL = Self.link(object["icon"]).flatMap { Self.domain(of: $0) != nil ? $0 : nil }
        self.inbox = inbox
        sharedInbox = ((object["endpoints"] as? [String: Any])?["sharedInbox"] as? String).flatMap { Self.domain(of: $0) != nil ? $0 : nil }
        followers = object["followers"] as? String
        url = Self.link(object["url"])
        self.keyID = keyID
        publicKeyPEM = pem
    }

    /// `user@domain`.
    var acct: String { "\(username)@\(domain)" }

    /// host[:port] of an http(s) URL, lowercased (the port left out when the scheme's own).
    static func domain(of url: String) -> String? {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), scheme == "https" || scheme == "http",
              let host = parts.host?.lowercased(), !host.isEmpty else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return parts.port.map { $0 == defaultPort ? bracketed : "\(bracketed):\($0)" } ?? bracketed
    }

    /// A link as ActivityStreams may give it: a string, an object with `url` or `href`, or
    /// a list of those (the first).
    static func link(_ value: Any?) -> String? {
        switch value {
        case let text as String: return text
        case let object as [String: Any]: return link(object["url"]) ?? (object["href"] as? String)
        case let list as [Any]: return list.lazy.compactMap(link).first
        default: return nil
        }
    }
}
