import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What carries one request and brings back its whole answer. `URLSessionTransport` in an
/// app; a wrapper in tests, to count attempts or lose an answer on purpose.
public protocol HTTPTransport: Sendable {
    /// Throws for a transport failure (`URLError`); any HTTP status is an answer.
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)
}

/// The transport of Foundation's `URLSession`.
public struct URLSessionTransport: HTTPTransport {
    public let session: URLSession

    public init(session: URLSession) {
        self.session = session
    }

    /// A session of its own, with no cache and no cookies: answers depend on the token.
    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpShouldSetCookies = false
        self.init(session: URLSession(configuration: configuration))
    }

    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return (data, http)
    }
}
