import Dispatch
import Foundation
import HTTP
import Images
import Locking

/// `?width=N` (API.md): a stored image's size, made on first request and kept beside it.
extension ImageStore {
    /// The size `width` wide of a stored image, made first if it is not there yet (on the
    /// heavy lane: `lane` says where the caller runs). Nil when there is no such image.
    /// Concurrent first requests make it once: the others wait for the one making it.
    func openSize(of name: StoredImageName, width: Int, lane: WorkLane) throws -> FileBody? {
        let sizePath = path(of: name.sizeName(width: width))
        if let kept = FileBody.open(path: sizePath) { return kept }
        // lstat, not fileExists: the original must be a file this server wrote, never a
        // link planted in the folder (libvips opens it by path and would follow one).
        guard Self.isRegularFile(path(of: name.name)) else { return nil }
        if lane != .heavy { throw MoveToHeavyLane() }
        let key = name.sizeName(width: width)
        switch sizes.claim(key) {
        case .made(let done):
            done.wait()
        case .yours(let done):
            defer { sizes.finish(key, done) }
            // Made between our look and our claim, by another request or instance.
            if FileManager.default.fileExists(atPath: sizePath) { break }
            try makeSize(of: name, width: width, at: sizePath)
        }
        return FileBody.open(path: sizePath)
    }

    static func isRegularFile(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
    }

    private func makeSize(of name: StoredImageName, width: Int, at sizePath: String) throws(APIError) {
        let temporary = path(of: ".upload-\(name.base)-w\(width).made.part")
        defer { unlink(temporary) }
        do {
            _ = try ImageResizer.resize(path(of: name.name), as: name.format, toWidth: width, writingTo: temporary)
        } catch {
            // The original was made here: failing to read it again is the server's fault.
            throw APIError(.failed, "the image size could not be made")
        }
        guard rename(temporary, sizePath) == 0 else { throw APIError(.failed, "the image size could not be stored") }
        counters.sizeMade()
    }
}

/// The sizes being made on this instance, each by one request; the others wait on it.
final class SizesInProgress: Sendable {
    enum Claim {
        /// Someone else is making it: wait for it, then read the file.
        case made(DispatchGroup)
        /// Make it, then `finish`.
        case yours(DispatchGroup)
    }

    private let making = ParkingLock([String: DispatchGroup]())

    func claim(_ key: String) -> Claim {
        making.withLock { making in
            if let existing = making[key] { return .made(existing) }
            let group = DispatchGroup()
            group.enter()
            making[key] = group
            return .yours(group)
        }
    }

    func finish(_ key: String, _ group: DispatchGroup) {
        making.withLock { _ = $0.removeValue(forKey: key) }
        group.leave()
    }
}
