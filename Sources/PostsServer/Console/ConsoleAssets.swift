import Crypto
import Foundation

/// The console's files (the repository's `console/` folder, installed next to the
/// migrations), read once at start. Their URLs carry a version made of their contents'
/// hash, `/console/assets/<version>/<file>`, so a browser may keep each for a year and a
/// new server's files are new URLs; `index.html` is the one page that is never cached, and
/// names the others through `{{assets}}`.
struct ConsoleAssets: Sendable {
    struct Asset: Sendable {
        let bytes: [UInt8]
        let contentType: String
    }

    let version: String
    let page: [UInt8]
    let files: [String: Asset]

    static let contentTypes = [
        "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8", "svg": "image/svg+xml",
        "png": "image/png", "txt": "text/plain; charset=utf-8",
    ]

    /// The files of `directory`: `index.html` and the assets beside it (one level, the
    /// extensions of `contentTypes`; anything else is not served).
    init(directory: URL) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        var hash = SHA256()
        var files: [String: Asset] = [:]
        var page: [UInt8]?
        for name in names {
            let bytes = Array(try Data(contentsOf: directory.appendingPathComponent(name)))
            if name == "index.html" {
                page = bytes
            } else if let type = Self.contentTypes[(name as NSString).pathExtension] {
                files[name] = Asset(bytes: bytes, contentType: type)
            } else {
                continue
            }
            hash.update(data: Array(name.utf8) + [0] + bytes)
        }
        guard let page else { throw Configuration.Invalid(description: "no index.html in the console folder \(directory.path)") }
        version = hash.finalize().prefix(8).map { String(format: "%02x", $0) }.joined()
        self.page = Array(String(decoding: page, as: UTF8.self)
            .replacingOccurrences(of: "{{assets}}", with: "/console/assets/\(version)").utf8)
        self.files = files
    }

    /// `explicit` (`CONSOLE_DIR`) if set, else `console/` where the migrations are looked for.
    static func locate(explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        if let explicit { return URL(fileURLWithPath: explicit) }
        guard let migrations = try? Migrations.locate(environment: environment) else { return nil }
        let beside = migrations.deletingLastPathComponent().appendingPathComponent("console")
        return FileManager.default.fileExists(atPath: beside.appendingPathComponent("index.html").path) ? beside : nil
    }
}
