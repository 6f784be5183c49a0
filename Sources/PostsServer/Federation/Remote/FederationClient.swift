import Foundation
import Synchronization

/// Our requests to other servers (API.md "Federation"): every one signed (draft-cavage, as
/// Mastodon's secure mode requires of fetches too), every one bounded (5 s to connect,
/// 10 s in all for a fetch and 15 s for a delivery, 1 MiB of answer), and none reaching a
/// private, loopback or link-local address, checked on the connected socket so a name that
/// resolves there is refused too, after a redirect as well (`FEDERATION_ALLOW_PRIVATE=1`
/// lifts that, and allows `http://`). Redirects of a fetch are followed by hand, at most
/// three, each signed for its own host. Used by one thread at a time (`FederationClients`).
final class FederationClient {
    static let accept = "application/activity+json, application/ld+json; profile=\"https://www.w3.org/ns/activitystreams\""
    static let maxResponseBytes = 1 << 20
    static let maxRedirects = 3

    struct Signer: Sendable {
        let keyID: String
        let privateKeyPEM: String
    }

    enum FetchFailure: Error, CustomStringConvertible {
        case refused(String)
        case gone
        case notFound
        case failed(String)

        var description: String {
            switch self {
            case .refused(let why): "refused: \(why)"
            case .gone: "gone (410)"
            case .notFound: "not found (404)"
            case .failed(let why): why
            }
        }
    }

    private let multiplexer: CurlMultiplexer
    private let settings: FederationSettings

    init(settings: FederationSettings) throws {
        self.settings = settings
        multiplexer = try CurlMultiplexer(trustedCertificates: nil, cancellation: CurlTransfer.Cancellation())
    }

    /// The document at `url` (an answer `200` with a JSON body), and the URL it came from
    /// after redirects.
    func fetch(_ url: String, signer: Signer, accept: String = FederationClient.accept) throws(FetchFailure) -> (body: [UInt8], url: String) {
        var current = url
        for _ in 0...Self.maxRedirects {
            guard let target = Target(current, allowHTTP: settings.allowPrivate) else { throw .refused("not a URL we may fetch: \(current)") }
            let headers: [String]
            do {
                headers = try signedHeaders(method: "get", target: target, body: nil, signer: signer) + ["Accept: \(accept)"]
            } catch {
                throw .failed("could not sign: \(error)")
            }
            var request = CurlMultiplexer.Request(url: current, headers: headers, body: [])
            request.isGet = true
            request.protocols = settings.protocols
            request.publicPeersOnly = !settings.allowPrivate
            request.maxResponseBytes = Self.maxResponseBytes
            let answer = multiplexer.perform([request], connectTimeoutSeconds: 5, timeoutSeconds: 10)[0]
            if answer.refusedPeer { throw .refused("\(target.host) is a private address") }
            if answer.cutShort { throw .refused("the answer is larger than 1 MiB") }
            guard answer.completed else { throw .failed("\(target.host): \(answer.message)") }
            switch answer.status {
            case 200: return (answer.body, current)
            case 301, 302, 303, 307, 308:
                guard let location = answer.location, let next = URL(string: location, relativeTo: URL(string: current)) else {
                    throw .failed("a redirect without a Location")
                }
                current = next.absoluteString
            case 404: throw .notFound
            case 410: throw .gone
            default: throw .failed("\(target.host) answered \(answer.status)")
            }
        }
        throw .failed("more than \(Self.maxRedirects) redirects")
    }

    struct Delivery {
        let inbox: String
        let body: [UInt8]
        let signer: Signer
    }

    /// POSTs each body to its inbox, all at once; an answer per delivery, in their order
    /// (nil: not sent, the inbox is not a URL we may post to).
    func deliver(_ deliveries: [Delivery]) -> [CurlMultiplexer.Response?] {
        var requests: [CurlMultiplexer.Request] = []
        var positions: [Int?] = []
        for delivery in deliveries {
            guard let target = Target(delivery.inbox, allowHTTP: settings.allowPrivate),
                  let headers = try? signedHeaders(method: "post", target: target, body: delivery.body, signer: delivery.signer) else {
                positions.append(nil)
                continue
            }
            var request = CurlMultiplexer.Request(url: delivery.inbox,
                                                  headers: headers + ["Content-Type: \(ActivityPub.contentType)", "Accept: \(Self.accept)"],
                                                  body: delivery.body)
            request.protocols = settings.protocols
            request.publicPeersOnly = !settings.allowPrivate
            request.maxResponseBytes = 64 * 1024
            positions.append(requests.count)
            requests.append(request)
        }
        let answers = requests.isEmpty ? [] : multiplexer.perform(requests, connectTimeoutSeconds: 5, timeoutSeconds: 15)
        return positions.map { $0.map { answers[$0] } }
    }

    /// `Date`, `Digest` (with a body) and `Signature`, signed now (real time: the far side
    /// judges it by its own clock).
    private func signedHeaders(method: String, target: Target, body: [UInt8]?, signer: Signer) throws -> [String] {
        let headers = try RequestSigning.headers(method: method, target: target.requestTarget, host: target.host, body: body,
                                                 keyID: signer.keyID, privateKeyPEM: signer.privateKeyPEM,
                                                 now: Int64(Date().timeIntervalSince1970))
        return headers.map { "\($0.0): \($0.1)" } + ["Host: \(target.host)"]
    }

    /// What a request's signature names of its URL: the `Host` (with a port that is not the
    /// scheme's default) and the request target (path and query). nil for a URL we may not
    /// use: not http(s) (not https unless private addresses are allowed), or with a user.
    struct Target {
        let host: String
        let requestTarget: String

        init?(_ url: String, allowHTTP: Bool) {
            guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(),
                  scheme == "https" || (scheme == "http" && allowHTTP),
                  let host = parts.host, !host.isEmpty, parts.user == nil, parts.password == nil else { return nil }
            let defaultPort = scheme == "https" ? 443 : 80
            let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            self.host = parts.port.map { $0 == defaultPort ? bracketed : "\(bracketed):\($0)" } ?? bracketed
            let path = parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath
            requestTarget = path + (parts.percentEncodedQuery.map { "?\($0)" } ?? "")
        }
    }
}

/// Clients for the threads that need one now (inbox requests checking a signature, job
/// handlers), kept between uses so their connections are reused; at most `limit` kept.
final class FederationClients: Sendable {
    private let settings: FederationSettings
    private let idle = Mutex<[FederationClientBox]>([])
    private let limit = 8

    init(settings: FederationSettings) {
        self.settings = settings
    }

    func with<T>(_ body: (FederationClient) throws -> T) throws -> T {
        let box = try idle.withLock { $0.popLast() } ?? FederationClientBox(try FederationClient(settings: settings))
        defer { idle.withLock { if $0.count < limit { $0.append(box) } } }
        return try body(box.client)
    }
}

/// A client handed from thread to thread, one at a time (`FederationClients`).
final class FederationClientBox: @unchecked Sendable {
    let client: FederationClient
    init(_ client: FederationClient) { self.client = client }
}
