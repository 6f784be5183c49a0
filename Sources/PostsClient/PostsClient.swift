import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The client of posts-server's HTTP API (API.md): one per server and signed-in user,
/// shared freely between tasks. Every call is `async throws`; an error answer of the
/// server is thrown as `PostsAPIError`, a network failure as the transport's `URLError`.
///
///     let client = PostsClient(baseURL: URL(string: "https://posts.example.com")!)
///     try await client.sendCode(to: "ash@example.com")
///     try await client.verifyCode("123456", email: "ash@example.com")
///     let post = try await client.createPost(NewPost(title: "Hi", summary: "…", body: "…"))
public final class PostsClient: Sendable {
    /// Where the server is; a path in it (`https://host/posts`) prefixes every route.
    public let baseURL: URL
    public let retryPolicy: RetryPolicy
    let transport: any HTTPTransport
    private let storedToken: Locked<String?>
    private let storedReadAfter: Locked<ReadAfterToken>

    /// - Parameters:
    ///   - token: a token kept from an earlier `verifyCode`, to resume that session.
    ///   - transport: `URLSessionTransport()` (a session of its own) unless given.
    public init(baseURL: URL, token: String? = nil, transport: any HTTPTransport = URLSessionTransport(),
                retryPolicy: RetryPolicy = .default) {
        self.baseURL = baseURL
        self.transport = transport
        self.retryPolicy = retryPolicy
        storedToken = Locked(token)
        storedReadAfter = Locked(ReadAfterToken())
    }

    /// The bearer token sent with every request: set by `verifyCode`, cleared by `logout`.
    /// Set it yourself to restore a session; nil sends requests anonymously.
    public var token: String? {
        get { storedToken.get() }
        set { storedToken.set(newValue) }
    }

    /// The `Read-After` token of this client's last write (API.md "Many databases"), sent
    /// with every later request: the server then answers from a database that has that
    /// write, so the client always reads what it just did, whichever instance answers. Hand
    /// it to another client (or keep it over a restart) to carry that on.
    public var readAfter: String? {
        get { storedReadAfter.get().token }
        set { storedReadAfter.update { $0.set(newValue) } }
    }

    /// True while the client holds a token.
    public var isSignedIn: Bool { token != nil }

    /// Sends a call, retrying by `retryPolicy`, and decodes its success answer.
    func send<Answer: Decodable>(_ request: APIRequest, as answer: Answer.Type = Answer.self) async throws -> Answer {
        let data = try await perform(request)
        // A decoder per call: JSONDecoder is not Sendable on every platform this supports.
        return try APIDateCoding.makeDecoder().decode(Answer.self, from: data)
    }

    /// The body of the 2xx answer; anything else thrown after the retries it deserves.
    func perform(_ request: APIRequest) async throws -> Data {
        var attempt = 1
        while true {
            let failure: RetryPolicy.Failure
            do {
                var urlRequest = try request.urlRequest(baseURL: baseURL, token: token)
                let kept = storedReadAfter.get()
                if let readAfter = kept.token { urlRequest.setValue(readAfter, forHTTPHeaderField: "Read-After") }
                let (data, response) = try await transport.send(urlRequest)
                if (200..<300).contains(response.statusCode) {
                    if let written = response.value(forHTTPHeaderField: "Read-After") {
                        storedReadAfter.update { $0.keepLater(written, sentAt: kept.generation) }
                    }
                    return data
                }
                failure = .answer(PostsAPIError(response: response, body: data))
            } catch let error as CancellationError {
                throw error
            } catch {
                failure = .transport(error)
            }
            guard let delay = retryPolicy.delay(after: failure, attempt: attempt, repeatable: request.isRepeatable,
                                                idempotencyKey: request.idempotencyKey != nil) else {
                switch failure {
                case .answer(let error): throw error
                case .transport(let error): throw error
                }
            }
            try await Task.sleep(for: delay)
            attempt += 1
        }
    }
}

/// A value shared between tasks, behind a lock. `NSLock` rather than `Mutex`: Mutex needs
/// iOS 18, and this library supports older systems.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func get() -> Value {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func set(_ newValue: Value) {
        lock.lock()
        defer { lock.unlock() }
        value = newValue
    }

    func update(_ change: (inout Value) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        change(&value)
    }
}
