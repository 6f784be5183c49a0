import Foundation

/// A temporary file written in large appends (the export), private to this user: 0600 in
/// the system's temporary folder, under a random name.
final class ExportFile: @unchecked Sendable {
    let path: String
    private let handle: FileHandle

    init() throws {
        let name = "posts-server-export-\(UUID().uuidString).json"
        path = (NSTemporaryDirectory() as NSString).appendingPathComponent(name)
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
              let handle = FileHandle(forWritingAtPath: path) else {
            throw APIError(.failed, "the export could not be written")
        }
        self.handle = handle
    }

    func write(_ bytes: [UInt8]) throws {
        guard !bytes.isEmpty else { return }
        try handle.write(contentsOf: bytes)
    }

    func close() throws {
        try handle.close()
    }

    func remove() {
        try? handle.close()
        unlink(path)
    }
}
