import Foundation
import Logging

/// `posts-server storage copy --from URL --to URL` (API.md "Storage for many instances"):
/// every stored image and size of one store written to another, so a one-machine install
/// moves to a bucket (or back) while it keeps serving.
///
/// Idempotent and resumable: a name the destination already holds is neither fetched nor
/// written again, and a store's put is whole or absent (S3's PUT, a folder's link or
/// rename), so running the copy again after an interruption carries on where it stopped.
/// Only names this server makes are copied (`StoredImageName`'s originals and sizes);
/// anything else in the folder or under the prefix is counted and left. One object at a
/// time through a scratch file: never a whole image in memory.
public struct StorageCopy {
    public struct Counts: Sendable, Equatable, CustomStringConvertible {
        public var copied = 0
        public var alreadyThere = 0
        /// Names this server does not make.
        public var skipped = 0
        /// Listed, then gone before they were fetched (an image deleted meanwhile).
        public var vanished = 0

        public var examined: Int { copied + alreadyThere + skipped + vanished }

        public var description: String {
            "\(copied) copied, \(alreadyThere) already there, \(skipped) skipped (not this server's images)"
                + (vanished > 0 ? ", \(vanished) deleted meanwhile" : "")
        }
    }

    /// Why the copy stopped before the end, with what it had done; what it did is kept.
    public struct Failure: Error, CustomStringConvertible {
        public let reason: String
        public let counts: Counts
        /// Stopped by a signal, not by a store.
        public let interrupted: Bool

        public var description: String {
            "after \(counts.examined) objects (\(counts)): \(reason). Running the same command again resumes where it stopped"
        }
    }

    let source: any ObjectStore
    let destination: any ObjectStore
    let progressEvery: Int
    /// Asked between objects: true stops the copy (a signal).
    let shouldStop: () -> Bool
    let progress: (String) -> Void

    init(from source: any ObjectStore, to destination: any ObjectStore, progressEvery: Int = 100,
         shouldStop: @escaping () -> Bool = { false }, progress: @escaping (String) -> Void) {
        self.source = source
        self.destination = destination
        self.progressEvery = max(1, progressEvery)
        self.shouldStop = shouldStop
        self.progress = progress
    }

    /// The stores `from` and `to` name, in `STORAGE_URL`'s forms; an `s3://` one (or both)
    /// signs with the one pair of credentials. Refused, with the option named: a malformed
    /// URL, an s3:// store without credentials, a source folder that does not exist, the
    /// same store twice.
    public init(from: String, to: String, accessKeyID: String?, secretAccessKey: String?, progressEvery: Int = 100,
                shouldStop: @escaping () -> Bool = { false },
                progress: @escaping (String) -> Void) throws(Configuration.Invalid) {
        let metrics = StorageMetrics(logger: Logger(label: "storage-copy") { _ in SwiftLogNoOpLogHandler() })
        func store(_ option: String, _ url: String) throws(Configuration.Invalid) -> (StorageSettings, any ObjectStore) {
            func invalid(_ reason: String) -> Configuration.Invalid { Configuration.Invalid(description: "\(option): \(reason)") }
            let parsed: StorageSettings?
            do {
                parsed = try StorageSettings.parse(url: url, accessKeyID: accessKeyID, secretAccessKey: secretAccessKey, publicURL: nil)
            } catch {
                throw invalid(error.description)
            }
            guard let settings = parsed else { throw invalid("needs a URL") }
            // A missing source folder would be made, and copy nothing: a typo, not an empty store.
            if option == "--from", case .file(let directory) = settings.location {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                    throw invalid("there is no folder \(directory)")
                }
            }
            do {
                return (settings, try StorageSettings.makeStore(settings, uploadDirectory: "", metrics: metrics))
            } catch {
                throw invalid("\(error)")
            }
        }
        let (sourceSettings, source) = try store("--from", from)
        let (destinationSettings, destination) = try store("--to", to)
        guard sourceSettings.location != destinationSettings.location else {
            throw Configuration.Invalid(description: "--from and --to name the same store (\(sourceSettings))")
        }
        self.init(from: source, to: destination, progressEvery: progressEvery, shouldStop: shouldStop, progress: progress)
    }

    /// Copies page by page, a progress line every `progressEvery` objects and one at the end.
    @discardableResult
    public func run() throws(Failure) -> Counts {
        var counts = Counts()
        func failure(_ reason: String, interrupted: Bool = false) -> Failure {
            Failure(reason: reason, counts: counts, interrupted: interrupted)
        }
        let scratch: String
        do {
            scratch = try Self.makeScratchDirectory()
        } catch {
            throw failure("cannot make a scratch folder: \(error)")
        }
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        var marker: String?
        repeat {
            let page: (names: [String], next: String?)
            do {
                page = try source.list(after: marker)
            } catch {
                throw failure("cannot list the source: \(error)")
            }
            for name in page.names {
                guard !shouldStop() else { throw failure("interrupted", interrupted: true) }
                do {
                    try copy(name, scratch: scratch + "/" + name, counts: &counts)
                } catch {
                    throw failure("\(name): \(error)")
                }
                if counts.examined % progressEvery == 0 { progress("\(counts.examined) objects so far: \(counts)") }
            }
            marker = page.next
        } while marker != nil
        progress("done, \(counts.examined) objects: \(counts)")
        return counts
    }

    private func copy(_ name: String, scratch: String, counts: inout Counts) throws {
        guard let format = StoredImageName.storedFormat(of: name) else {
            counts.skipped += 1
            return
        }
        // Before fetching: what a run before this one copied is not fetched again.
        guard try !destination.exists(name) else {
            counts.alreadyThere += 1
            return
        }
        // ifAbsent: a size an instance made in the destination meanwhile is as good as ours.
        let written = try source.withLocalCopy(of: name, scratch: scratch) { path in
            try destination.put(name, from: path, contentType: format.contentType, ifAbsent: true)
        }
        switch written {
        case nil: counts.vanished += 1
        case true?: counts.copied += 1
        case false?: counts.alreadyThere += 1
        }
    }

    /// A new private folder for fetched objects, removed when the copy ends.
    private static func makeScratchDirectory() throws -> String {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("posts-server-copy-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw StorageFailure.unavailable(String(cString: strerror(errno)))
        }
        return String(cString: made)
    }
}
