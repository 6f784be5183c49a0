import Foundation
import HTTP

/// The images of posts, files in `UPLOAD_DIR` under names only this server makes: 32 random
/// hex digits and the extension of their real type. Nothing else there is ever served.
struct ImageStore: Sendable {
    let directory: String

    /// Creates the folder if needed (the multipart consumer writes its temporary files there)
    /// and removes the temporary files a crashed process left behind.
    init(directory: String) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        removeAbandonedUploads()
    }

    /// An upload being received is written to at least every `bodyGracePeriod` or it is cut
    /// off (408): a temporary file untouched for an hour belongs to no live request, even of
    /// another instance sharing the folder.
    private func removeAbandonedUploads(olderThan age: TimeInterval = 3600) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let cutoff = Date().addingTimeInterval(-age)
        for name in names where name.hasPrefix(".upload-") && name.hasSuffix(".part") {
            let attributes = try? FileManager.default.attributesOfItem(atPath: path(of: name))
            if let modified = attributes?[.modificationDate] as? Date, modified < cutoff { unlink(path(of: name)) }
        }
    }

    struct Stored: Sendable {
        let name: String
        var url: String { "/uploads/\(name)" }
    }

    /// Keeps an upload (already checked to be an image on its first bytes) under a new
    /// name, by an atomic rename of its temporary file: never half-written when served.
    func keep(_ file: UploadedFile) throws -> Stored {
        guard let type = Self.sniff(file.temporaryPath) else {
            throw APIError(.unsupportedMedia, "\(file.fieldName) must be a JPEG, PNG, GIF or WebP image")
        }
        let name = Self.randomHex(bytes: 16) + "." + type.fileExtension
        do {
            try file.keep(at: path(of: name))
        } catch {
            throw APIError(.failed, "the image could not be stored")
        }
        return Stored(name: name)
    }

    /// Removes the image behind an `image_url` this server made (anything else is left alone).
    func remove(url: String?) {
        guard let url, url.hasPrefix("/uploads/") else { return }
        let name = String(url.dropFirst("/uploads/".count))
        guard Self.type(ofStoredName: name) != nil else { return }
        unlink(path(of: name))
    }

    /// Removes every image this server stored (`POST /api/dev/reset`); any other file in
    /// the folder is left alone, whatever `UPLOAD_DIR` points at.
    func removeAll() throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where Self.type(ofStoredName: name) != nil {
            unlink(path(of: name))
        }
    }

    /// The stored image of that name and its type; nil for any name this server did not
    /// make (`..`, slashes, other files) or that is gone.
    func open(_ name: String) -> (FileBody, ImageType)? {
        guard let type = Self.type(ofStoredName: name), let file = FileBody.open(path: path(of: name)) else { return nil }
        return (file, type)
    }

    static func type(ofStoredName name: String) -> ImageType? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count == 32,
              parts[0].utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        return ImageType.allCases.first { $0.fileExtension == parts[1] }
    }

    private func path(of name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    private static func sniff(_ path: String) -> ImageType? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return ImageType(sniffing: (try? handle.read(upToCount: ImageType.signatureLength)) ?? Data())
    }

    private static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
    }
}
