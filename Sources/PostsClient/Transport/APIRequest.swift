import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One call of the API as the client describes it: method, path, query and body. Made
/// into a `URLRequest` for each attempt, with the token of that moment and the call's one
/// idempotency key.
struct APIRequest: Sendable {
    enum Body: Sendable {
        case none
        case json(Data)
        case multipart(MultipartForm)
    }

    var method: String
    var path: String
    var query: [(String, String)] = []
    var body: Body = .none
    /// Generated once per call (never per attempt) for the creates that honour it.
    var idempotencyKey: String?
    /// A POST whose repetition the server answers with the first one's result.
    var repeatsHarmlessly = false

    init(_ method: String, _ path: String, query: [(String, String)] = [], body: Body = .none) {
        self.method = method
        self.path = path
        self.query = query
        self.body = body
    }

    static func json(_ method: String, _ path: String, _ fields: [(String, JSONValue)]) throws -> APIRequest {
        APIRequest(method, path, body: .json(try JSONEncoder().encode(JSONFields(fields))))
    }

    /// With a fresh `Idempotency-Key`.
    func idempotent() -> APIRequest {
        var request = self
        request.idempotencyKey = UUID().uuidString
        return request
    }

    /// Marked safe to send again although the method is not (see `repeatsHarmlessly`).
    func repeatable() -> APIRequest {
        var request = self
        request.repeatsHarmlessly = true
        return request
    }

    /// Safe to send again after a transport failure: the method says so, or the key does,
    /// or the route does (`repeatable()`).
    var isRepeatable: Bool {
        ["GET", "HEAD", "PUT", "DELETE"].contains(method) || idempotencyKey != nil || repeatsHarmlessly
    }

    func urlRequest(baseURL: URL, token: String?, timeout: TimeInterval = 60) throws -> URLRequest {
        var request = URLRequest(url: try url(baseURL: baseURL), timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let idempotencyKey { request.setValue(idempotencyKey, forHTTPHeaderField: "Idempotency-Key") }
        switch body {
        case .none:
            break
        case .json(let data):
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = data
        case .multipart(let form):
            request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
            request.httpBody = form.body
        }
        return request
    }

    /// The base URL's own path (a server mounted under a prefix) is kept.
    func url(baseURL: URL) throws -> URL {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) else {
            throw URLError(.badURL)
        }
        let prefix = components.percentEncodedPath.hasSuffix("/")
            ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        components.percentEncodedPath = prefix + path
        components.percentEncodedQuery = query.isEmpty ? nil
            : query.map { "\(Self.escaped($0.0))=\(Self.escaped($0.1))" }.joined(separator: "&")
        guard let url = components.url else { throw URLError(.badURL) }
        return url
    }

    /// A text as one segment of `path` (a tag's name): `/`, `?`, `#` and `%` cannot
    /// change the route. A segment of dots alone would be read as `.` or `..` and move up
    /// the path, so its dots are escaped too.
    static func pathSegment(_ text: String) -> String {
        guard text.isEmpty || text.contains(where: { $0 != "." }) else { return String(repeating: "%2E", count: text.count) }
        return escaped(text)
    }

    /// Only unreserved characters stay as they are: `+` or `&` in an email must not change
    /// the query.
    private static func escaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
