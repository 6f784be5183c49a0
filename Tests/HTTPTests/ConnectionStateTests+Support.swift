@testable import HTTP

/// What the state machine's tests share: a clock in seconds, heads parsed from text, and a
/// router with a route of each kind.
enum StateFixture {
    static let second: UInt64 = 1_000_000_000
    static let start: UInt64 = 1_000 * second

    static func configuration(maxRequests: Int = 100) -> ServerConfiguration {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.maxRequestsPerConnection = maxRequests
        return configuration
    }

    static func state(maxRequests: Int = 100) -> ConnectionState {
        let configuration = configuration(maxRequests: maxRequests)
        return ConnectionState(timeouts: ConnectionTimeouts(configuration), maxRequestsPerConnection: maxRequests,
                               openedAt: start)
    }

    /// `/json` collects bodies; `/gated` admits only heads with `X-Pass`; `/ping` takes none.
    static let router: Router = {
        var router = Router()
        router.get("/ping") { _, _ in Response() }
        router.post("/json", body: .collect(limit: 1000)) { _, _ in Response() }
        router.post("/gated", body: .collect(limit: 1000), admission: Admission { head, _ in
            guard let pass = head.headers["X-Pass"] else { throw HTTPError(.unauthorized, message: "no") }
            return pass
        }) { _, _ in Response() }
        return router
    }()

    static func head(_ text: String) -> RequestHead {
        var parser = RequestParser(limits: RequestParser.Limits())
        Array(text.utf8).withUnsafeBytes { parser.feed($0) }
        guard case .head(let head)? = try? parser.next() else { fatalError("not a head: \(text)") }
        return head
    }

    static func post(_ path: String, length: Int, extra: String = "") -> RequestHead {
        head("POST \(path) HTTP/1.1\r\nHost: t\r\n\(extra)Content-Length: \(length)\r\n\r\n")
    }

    static func match(_ head: RequestHead) -> Router.Match {
        router.match(method: head.method, path: head.path)
    }

    /// Takes a head with a collected body as far as reading it, memory granted.
    static func readingBody(_ state: inout ConnectionState, _ head: RequestHead, budget: BodyMemoryBudget,
                            at now: UInt64) {
        _ = state.headReceived(head, clientAddress: "a", match: match(head), bodyIsBuffered: false, now: now)
        _ = state.chooseBody(CollectingBodyConsumer(limit: 1000), buffered: 0)
        _ = state.reserveMemory(now: now) { budget.claim($0, client: "a", onGrant: {}) }
    }
}

extension ConnectionState {
    var phaseName: String {
        switch phase {
        case .idle: "idle"
        case .readingHead: "readingHead"
        case .admitting: "admitting"
        case .awaitingMemory: "awaitingMemory"
        case .readingBody: "readingBody"
        case .handling: "handling"
        case .writing: "writing"
        case .streaming: "streaming"
        case .lingering: "lingering"
        case .closed: "closed"
        }
    }
}

extension ConnectionState.HeadAction: Equatable {
    public static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case (.parse, .parse), (.admit, .admit), (.prepareBody, .prepareBody): true
        default: false
        }
    }
}
