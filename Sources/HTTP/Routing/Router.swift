/// Maps method + path to a handler. Patterns are literal segments and `:name` parameters;
/// a literal beats a parameter at the same position (`/api/posts/recent` before
/// `/api/posts/:id`). Built once at start-up, then only read.
public struct Router: Sendable {
    public typealias Handler = @Sendable (Request, RequestContext) throws -> Response

    /// JSON bodies (API.md "Limits").
    public static let defaultBodyLimit = 1024 * 1024

    public struct Route: Sendable {
        public let method: HTTPMethod
        /// The pattern as registered, e.g. `/api/posts/:id` (the route label of metrics).
        public let pattern: String
        public let body: BodyPolicy
        /// Answered on the event loop, without a hand-off to a worker: only for handlers
        /// that never block (constant answers such as /api/ping).
        public let runsOnEventLoop: Bool
        /// Its handler may wait for a batch of writes of its kind to form (a like, a comment):
        /// it runs on the coalescing lane's threads (`ServerConfiguration`), so that waiting
        /// never holds a worker that every other request needs.
        public let coalesces: Bool
        /// Decides on the request from its head, before its body is read (see `Admission`).
        public let admission: Admission?
        let handler: Handler
    }

    public enum Match: Sendable {
        case found(Route, Parameters)
        case methodNotAllowed(allowed: [HTTPMethod])
        case notFound

        /// The matched route's pattern (the route label of logs and metrics).
        public var pattern: String? {
            if case .found(let route, _) = self { return route.pattern }
            return nil
        }
    }

    private enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    private struct Resource: Sendable {
        let pattern: String
        let segments: [Segment]
        var routes: [HTTPMethod: Route] = [:]
    }

    private var resources: [Resource] = []
    /// The resources without parameters, by pattern: most requests name one of them, and
    /// one lookup finds it (a scan of every resource cost a ping 7% of its time in retains
    /// and releases of the segments compared, perf at 46k req/s).
    private var staticResources: [String: Int] = [:]
    /// The others' indexes, by their number of segments.
    private var parameterized: [Int: [Int]] = [:]

    public init() {}

    public mutating func add(_ method: HTTPMethod, _ pattern: String, body: BodyPolicy,
                             runsOnEventLoop: Bool = false, coalesces: Bool = false, admission: Admission? = nil,
                             _ handler: @escaping Handler) {
        let route = Route(method: method, pattern: pattern, body: body, runsOnEventLoop: runsOnEventLoop, coalesces: coalesces,
                          admission: admission, handler: handler)
        if let index = resources.firstIndex(where: { $0.pattern == pattern }) {
            precondition(resources[index].routes[method] == nil, "\(method) \(pattern) is registered twice")
            resources[index].routes[method] = route
            return
        }
        let segments: [Segment] = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
            $0.hasPrefix(":") ? .parameter(String($0.dropFirst())) : .literal(String($0))
        }
        precondition(pattern.hasPrefix("/"), "route patterns start with /")
        var resource = Resource(pattern: pattern, segments: segments)
        resource.routes[method] = route
        if segments.allSatisfy({ if case .literal = $0 { true } else { false } }) {
            staticResources[pattern] = resources.count
        } else {
            parameterized[segments.count, default: []].append(resources.count)
        }
        resources.append(resource)
    }

    // GET and DELETE take no body; the others collect up to 1 MiB unless told otherwise.
    public mutating func get(_ pattern: String, runsOnEventLoop: Bool = false, admission: Admission? = nil,
                             _ handler: @escaping Handler) {
        add(.GET, pattern, body: .none, runsOnEventLoop: runsOnEventLoop, admission: admission, handler)
    }
    public mutating func delete(_ pattern: String, body: BodyPolicy = .none, coalesces: Bool = false, admission: Admission? = nil,
                                _ handler: @escaping Handler) {
        add(.DELETE, pattern, body: body, coalesces: coalesces, admission: admission, handler)
    }
    public mutating func post(_ pattern: String, bodyLimit: Int = defaultBodyLimit, _ handler: @escaping Handler) {
        add(.POST, pattern, body: .collect(limit: bodyLimit), handler)
    }
    public mutating func post(_ pattern: String, body: BodyPolicy, coalesces: Bool = false, admission: Admission? = nil,
                              _ handler: @escaping Handler) {
        add(.POST, pattern, body: body, coalesces: coalesces, admission: admission, handler)
    }
    public mutating func put(_ pattern: String, body: BodyPolicy = .collect(limit: defaultBodyLimit), coalesces: Bool = false,
                             admission: Admission? = nil, _ handler: @escaping Handler) {
        add(.PUT, pattern, body: body, coalesces: coalesces, admission: admission, handler)
    }
    public mutating func patch(_ pattern: String, body: BodyPolicy = .collect(limit: defaultBodyLimit),
                               admission: Admission? = nil, _ handler: @escaping Handler) {
        add(.PATCH, pattern, body: body, admission: admission, handler)
    }

    /// Every registered route, by pattern in registration order (then by method): what the
    /// server answers, for checks that its description (openapi.yaml) misses none.
    public var routes: [Route] {
        resources.flatMap { resource in resource.routes.values.sorted { $0.method.rawValue < $1.method.rawValue } }
    }

    /// The route for a request. HEAD is served by the GET route of the same path.
    public func match(method: HTTPMethod, path: Substring) -> Match {
        guard path.hasPrefix("/") else { return .notFound }
        // Without a percent sign the path is its own decoding, and a resource without
        // parameters that it names is the most specific there is (all its segments literal).
        let escaped = path.utf8.contains(UInt8(ascii: "%"))
        if !escaped, let index = staticResources[String(path)] {
            return Self.route(of: resources[index], method: method, parameters: [])
        }
        var decoded: [String] = []
        for raw in path.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            guard let segment = PercentDecoding.decode(raw, plusAsSpace: false) else { return .notFound }
            decoded.append(segment)
        }
        // A decoded segment may hold a "/" (%2F): only a segment-by-segment comparison with
        // every resource of that length is right then.
        let candidates = escaped ? Array(resources.indices) : parameterized[decoded.count] ?? []
        var best: (resource: Resource, parameters: [(String, String)])?
        for index in candidates {
            let resource = resources[index]
            guard let parameters = Self.bind(resource.segments, to: decoded) else { continue }
            if let current = best, !Self.isMoreSpecific(resource.segments, than: current.resource.segments) {
                continue
            }
            best = (resource, parameters)
        }
        guard let (resource, parameters) = best else { return .notFound }
        return Self.route(of: resource, method: method, parameters: parameters)
    }

    /// The resource's route for the method; HEAD is served by GET.
    private static func route(of resource: Resource, method: HTTPMethod, parameters: [(String, String)]) -> Match {
        if let route = resource.routes[method] ?? (method == .HEAD ? resource.routes[.GET] : nil) {
            return .found(route, Parameters(values: parameters))
        }
        var allowed = Array(resource.routes.keys)
        if resource.routes[.GET] != nil { allowed.append(.HEAD) }
        return .methodNotAllowed(allowed: allowed.sorted { $0.rawValue < $1.rawValue })
    }

    private static func bind(_ segments: [Segment], to path: [String]) -> [(String, String)]? {
        guard segments.count == path.count else { return nil }
        var parameters: [(String, String)] = []
        for (segment, value) in zip(segments, path) {
            switch segment {
            case .literal(let literal): guard literal == value else { return nil }
            case .parameter(let name):
                guard !value.isEmpty else { return nil }
                parameters.append((name, value))
            }
        }
        return parameters
    }

    private static func isMoreSpecific(_ a: [Segment], than b: [Segment]) -> Bool {
        for (x, y) in zip(a, b) {
            switch (x, y) {
            case (.literal, .parameter): return true
            case (.parameter, .literal): return false
            default: continue
            }
        }
        return false
    }
}

/// The values of a route's `:name` segments, percent-decoded.
public struct Parameters: Sendable {
    let values: [(String, String)]

    public init(values: [(String, String)] = []) { self.values = values }

    public subscript(name: String) -> String? {
        values.first { $0.0 == name }?.1
    }

    /// The parameter as a typed value; a value of the wrong form names no resource: 404.
    public func require<Value: PathParameterValue>(_ name: String, as type: Value.Type = Value.self)
        throws(HTTPError) -> Value {
        guard let text = self[name], let value = Value(pathParameter: text) else { throw .notFound() }
        return value
    }
}

/// A type a path segment can be read as.
public protocol PathParameterValue {
    init?(pathParameter: String)
}

extension String: PathParameterValue {
    public init?(pathParameter: String) { self = pathParameter }
}

extension Int64: PathParameterValue {
    /// Plain decimal digits only: `+5`, ` 5` or `5.0` name no post.
    public init?(pathParameter: String) {
        guard !pathParameter.isEmpty, pathParameter.utf8.count <= 19,
              pathParameter.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int64(pathParameter)
        else { return nil }
        self = value
    }
}
