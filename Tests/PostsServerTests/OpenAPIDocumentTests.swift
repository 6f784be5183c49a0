import Foundation
@testable import PostsServer
import Testing
import TestSupport

/// openapi.yaml: a valid OpenAPI 3.1 document, served byte for byte, naming exactly the
/// routes the server answers. (scripts/api-conformance checks the answers against it.)
@Suite struct OpenAPIDocumentTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let documentFile = repositoryRoot.appendingPathComponent("openapi.yaml")

    @Test func document_passesOpenAPISpecValidator() throws {
        guard let validator = Self.validatorExecutable() else {
            Issue.record("""
                openapi-spec-validator not found: scripts/test installs it (into .build/python-tools); \
                or set OPENAPI_SPEC_VALIDATOR to its path
                """)
            return
        }
        let process = Process()
        process.executableURL = validator
        process.arguments = [Self.documentFile.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "openapi-spec-validator: \(text)")
    }

    @Test func servedDocument_isTheFileByteForByte() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let answer = try client.get("/api/openapi.yaml")
        #expect(answer.status == 200)
        #expect(answer.header("Content-Type") == "application/yaml")
        #expect(answer.body == Array(try Data(contentsOf: Self.documentFile)))
    }

    /// Every method and pattern the router has is a documented operation, and the other way
    /// round. The application runs in trust mode, so the dev routes count too.
    @Test func documentedOperations_areExactlyTheRegisteredRoutes() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let registered = Set(app.router.routes.map { "\($0.method) \($0.pattern)" })
        let documented = try Self.documentedOperations()
        #expect(registered.subtracting(documented).sorted() == [], "routes the document misses")
        #expect(documented.subtracting(registered).sorted() == [], "documented operations with no route")
        #expect(registered.count > 30)
    }

    /// The operations schemathesis leaves out (streams never end): their heads are the
    /// document's.
    @Test(arguments: ["/api/events", "/api/notifications/events"])
    func eventStreamHead_isTheDocumented(_ path: String) throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let connection = try RawHTTPClient(port: app.server.port)
        try connection.send("GET \(path) HTTP/1.1\r\nHost: localhost\r\nX-User-Email: reader@example.com\r\n\r\n")
        let head = try connection.readHead()
        #expect(head.status == 200)
        #expect(head.header("Content-Type") == "text/event-stream")
        #expect(head.header("Cache-Control") == "no-cache")
        #expect(head.header("X-Accel-Buffering") == "no")
        #expect(head.header("X-Request-Id") != nil)
        let document = String(decoding: try Data(contentsOf: Self.documentFile), as: UTF8.self)
        for documented in ["text/event-stream:", "schema: {const: no-cache}", #"schema: {const: "no"}"#] {
            #expect(document.contains(documented), "the document no longer says \(documented)")
        }
    }

    /// `METHOD /pattern` for each operation under `paths:`, `{name}` written as the router's
    /// `:name`. A reader for the block style the document is written in (paths two spaces
    /// in, methods four), not for YAML at large: the package takes no YAML dependency.
    static func documentedOperations() throws -> Set<String> {
        let lines = String(decoding: try Data(contentsOf: documentFile), as: UTF8.self).split(separator: "\n")
        let methods: Set<String> = ["get", "put", "post", "patch", "delete", "head", "options", "trace"]
        guard let start = lines.firstIndex(of: "paths:") else { throw DocumentShape(description: "no paths: section") }
        var operations = Set<String>()
        var path: String?
        for line in lines[(start + 1)...] {
            if let first = line.first, first != " ", first != "#" { break }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).dropLast())
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":"),
                      case let key = String(line.dropFirst(4).dropLast()), methods.contains(key) {
                guard let path else { throw DocumentShape(description: "\(key) before any path") }
                operations.insert("\(key.uppercased()) \(routerPattern(path))")
            }
        }
        return operations
    }

    /// `/api/posts/{id}` → `/api/posts/:id`.
    static func routerPattern(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") ? ":" + segment.dropFirst().dropLast() : String(segment)
        }.joined(separator: "/")
    }

    struct DocumentShape: Error, CustomStringConvertible {
        let description: String
    }

    /// OPENAPI_SPEC_VALIDATOR (scripts/test sets it), else the venv scripts/test makes,
    /// else the PATH.
    static func validatorExecutable() -> URL? {
        let environment = ProcessInfo.processInfo.environment
        let name = "openapi-spec-validator"
        var candidates: [String] = []
        if let configured = environment["OPENAPI_SPEC_VALIDATOR"], !configured.isEmpty { candidates.append(configured) }
        candidates.append(repositoryRoot.appendingPathComponent(".build/python-tools/bin/\(name)").path)
        candidates += (environment["PATH"] ?? "").split(separator: ":").map { "\($0)/\(name)" }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }.map(URL.init(fileURLWithPath:))
    }
}
