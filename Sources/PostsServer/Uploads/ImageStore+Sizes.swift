import Dispatch
import Foundation
import HTTP
import Images
import Locking

/// `?width=N` (API.md): a stored image's size, made on first request and kept beside it in
/// the store. Made once across instances: each looks for it first, and puts it only if
/// absent (a bucket's conditional create, a folder's `link`).
extension ImageStore {
    /// The size `width` wide of a stored image, made first if it is not there yet (on the
    /// heavy lane: `lane` says where the caller runs). Nil when there is no such image.
    /// Concurrent first requests on this instance make it once: the others wait for it.
    func openSize(of name: StoredImageName, width: Int, lane: WorkLane) throws -> ObjectFile? {
        let key = name.sizeName(width: width)
        if !store.isLocal && lane != .heavy { throw MoveToHeavyLane() }
        if let kept = try store.open(key, scratch: fetchScratch()) { return kept }
        if lane != .heavy { throw MoveToHeavyLane() }
        switch sizes.claim(key) {
        case .made(let done):
            done.wait()
            return try store.open(key, scratch: fetchScratch())
        case .yours(let done):
            defer { sizes.finish(key, done) }
            // Made between our look and our claim, by another request or instance.
            if let kept = try store.open(key, scratch: fetchScratch()) { return kept }
            return try makeSize(of: name, width: width)
        }
    }

    /// Whether the size exists, made first if it did not (for a revalidation or a redirect,
    /// which need no bytes); false when there is no such image.
    func ensureSize(of name: StoredImageName, width: Int, lane: WorkLane) throws -> Bool {
        if try store.exists(name.sizeName(width: width)) { return true }
        guard let made = try openSize(of: name, width: width, lane: lane) else { return false }
        made.discard()
        return true
    }

    /// Makes the size from the original, puts it in the store unless another instance was
    /// first, and sends the file made here either way (the same pixels): a scratch file, the
    /// reader's to remove once open.
    private func makeSize(of name: StoredImageName, width: Int) throws -> ObjectFile? {
        let temporary = scratchPath(".upload-\(name.base)-w\(width)-\(UUID().uuidString).made.part")
        var sent = false
        defer { if !sent { unlink(temporary) } }
        let made: Bool? = try withLocalCopy(of: name) { original in
            do {
                _ = try ImageResizer.resize(original, as: name.format, toWidth: width, writingTo: temporary)
            } catch {
                // The original was made here: failing to read it again is the server's fault.
                throw APIError(.failed, "the image size could not be made")
            }
            return true
        }
        guard made != nil else { return nil }
        if try store.put(name.sizeName(width: width), from: temporary, contentType: name.format.still.contentType, ifAbsent: true) {
            counters.sizeMade()
        }
        sent = true
        return ObjectFile(path: temporary, isScratch: true)
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
