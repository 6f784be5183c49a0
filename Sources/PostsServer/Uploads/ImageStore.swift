import Foundation
import HTTP
import Images
import Postgres

/// The stored images of posts and avatars, kept in an `ObjectStore` (a folder or a
/// bucket) under names only this server makes (`StoredImageName`). Every upload is made
/// again by the image pipeline in the upload folder (`UPLOAD_DIR`, where the multipart
/// consumer also writes) and then put in the store before the database commits; its sizes
/// are made on first request (`ImageStore+Sizes`).
struct ImageStore: Sendable {
    /// The upload folder: temporary files only when the store is a bucket.
    let directory: String
    let store: any ObjectStore
    /// Where deletions are queued (`StorageDeletion`), and the connections to queue one
    /// outside any transaction with.
    let jobs: JobScheduler
    let pool: ConnectionPool
    let sizes = SizesInProgress()
    let counters = ImageCounters()

    /// Creates the folder if needed and removes the temporary files a crashed process left behind.
    init(directory: String, store: any ObjectStore, jobs: JobScheduler, pool: ConnectionPool) throws {
        self.directory = directory.hasSuffix("/") ? directory : directory + "/"
        self.store = store
        self.jobs = jobs
        self.pool = pool
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        removeAbandonedFiles()
    }

    /// An upload being received is written to at least every `bodyGracePeriod` or it is cut
    /// off (408), and an image is made in seconds: a temporary file untouched for an hour
    /// belongs to no live request, even of another instance sharing the folder.
    private func removeAbandonedFiles(olderThan age: TimeInterval = 3600) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let cutoff = Date().addingTimeInterval(-age)
        for name in names where name.hasPrefix(".upload-") && name.hasSuffix(".part") {
            let attributes = try? FileManager.default.attributesOfItem(atPath: scratchPath(name))
            if let modified = attributes?[.modificationDate] as? Date, modified < cutoff { unlink(scratchPath(name)) }
        }
    }

    struct Stored: Sendable {
        let name: StoredImageName
        let width: Int
        let height: Int
        var url: String { name.url }
    }

    /// Makes a post's image from an upload: checked, upright, sRGB, without metadata, in its
    /// format (HEIC as JPEG), kept under a new name. Runs on the heavy lane.
    func keep(_ file: UploadedFile) throws(APIError) -> Stored {
        try make(from: file) { source, format, destination throws(ImageFailure) in
            try ImagePipeline.normalize(source, as: format, to: destination)
        }
    }

    /// Makes an avatar from an upload: the same, cropped square and at most 512 px.
    func keepAvatar(_ file: UploadedFile) throws(APIError) -> Stored {
        try make(from: file, as: \.still) { source, format, destination throws(ImageFailure) in
            try ImageResizer.avatar(source, as: format, writingTo: destination)
        }
    }

    /// Makes the image in a temporary file, then puts it in the store: an object appears
    /// only whole, and before the transaction that names it commits.
    private func make(from file: UploadedFile, as written: KeyPath<ImageFormat, ImageFormat> = \.stored,
                      _ process: (String, ImageFormat, String) throws(ImageFailure) -> ProcessedImage) throws(APIError) -> Stored {
        guard let format = Self.sniff(file.temporaryPath) else {
            throw APIError(.unsupportedMedia, "\(file.fieldName) must be \(ImageFormat.acceptedNames)")
        }
        let name = StoredImageName.random(format[keyPath: written])
        let temporary = scratchPath(".upload-\(name.base).made.part")
        defer { unlink(temporary) }
        let made: ProcessedImage
        do {
            made = try process(file.temporaryPath, format, temporary)
        } catch {
            counters.refused(error)
            throw error.apiError
        }
        do {
            try store.put(name.name, from: temporary, contentType: name.format.contentType, ifAbsent: false)
        } catch {
            throw error.apiError
        }
        counters.processed()
        return Stored(name: name, width: made.width, height: made.height)
    }

    /// Removes at once the image behind a URL this server made for a transaction that did
    /// not commit (anything else is left alone). If the store cannot say yes now, the
    /// deletion is queued.
    func remove(url: String?) {
        guard let url, let name = StoredImageName(url: url) else { return }
        do {
            try store.delete(name.allNames)
        } catch {
            try? pool.withConnection { try drop([url], on: $0) }
        }
    }

    /// API.md: a stored image goes once nothing names it. A write that stops naming images
    /// (an edit, a delete, an avatar replaced) queues their deletion in its own transaction,
    /// so a crash or a store outage after the commit delays the deletion and never loses
    /// it; the job checks that no post or profile names the URL again before it deletes.
    /// URLs this server did not make are left alone.
    func drop(_ urls: [String?], on connection: PostgresConnection) throws {
        let ours = urls.compactMap { url in url.flatMap { StoredImageName(url: $0) == nil ? nil : $0 } }
        try jobs.enqueue(.storageDeletion, ours.map(JobPayload.storageDeletion), on: connection)
    }

    /// Removes every image and size this server stored (`POST /api/dev/reset`); anything
    /// else in the store is left alone, whatever it is.
    func removeAll() throws {
        var marker: String?
        repeat {
            let page = try store.list(after: marker)
            try store.delete(page.names.filter { StoredImageName($0) != nil || StoredImageName.isSizeName($0) })
            marker = page.next
        } while marker != nil
    }

    /// The stored original of that name, to open for sending; nil for any name this server
    /// did not make or that is gone.
    func open(_ stored: StoredImageName) throws(StorageFailure) -> ObjectFile? {
        try store.open(stored.name, scratch: fetchScratch())
    }

    /// A file holding the stored original, for `body`; nil when there is none.
    func withLocalCopy<T>(of stored: StoredImageName, _ body: (String) throws -> T) throws -> T? {
        try store.withLocalCopy(of: stored.name, scratch: fetchScratch(), body)
    }

    /// A temporary file's path in the upload folder (`.upload-…part`, swept at start).
    func scratchPath(_ name: String) -> String { directory + name }

    /// A new path for an object fetched from the store (a bucket's GET lands there).
    func fetchScratch() -> String { scratchPath(".upload-\(UUID().uuidString).fetch.part") }

    private static func sniff(_ path: String) -> ImageFormat? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return ImageFormat(sniffing: (try? handle.read(upToCount: ImageFormat.signatureLength)) ?? Data())
    }
}
