import Foundation
import HTTP
import Images

/// The stored images of posts and avatars, files in `UPLOAD_DIR` (see `StoredImageName`).
/// Every upload is made again by the image pipeline before it is kept; its sizes are made
/// on first request (`ImageStore+Sizes`).
struct ImageStore: Sendable {
    let directory: String
    let sizes = SizesInProgress()
    let counters = ImageCounters()

    /// Creates the folder if needed (the multipart consumer writes its temporary files there)
    /// and removes the temporary files a crashed process left behind.
    init(directory: String) throws {
        self.directory = directory
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
            let attributes = try? FileManager.default.attributesOfItem(atPath: path(of: name))
            if let modified = attributes?[.modificationDate] as? Date, modified < cutoff { unlink(path(of: name)) }
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

    /// Writes the made image to a temporary name and renames it into place: a file served
    /// under a stored name is always whole.
    private func make(from file: UploadedFile, as written: KeyPath<ImageFormat, ImageFormat> = \.stored,
                      _ process: (String, ImageFormat, String) throws(ImageFailure) -> ProcessedImage) throws(APIError) -> Stored {
        guard let format = Self.sniff(file.temporaryPath) else {
            throw APIError(.unsupportedMedia, "\(file.fieldName) must be \(ImageFormat.acceptedNames)")
        }
        let name = StoredImageName.random(format[keyPath: written])
        let temporary = path(of: ".upload-\(name.base).made.part")
        defer { unlink(temporary) }
        let made: ProcessedImage
        do {
            made = try process(file.temporaryPath, format, temporary)
        } catch {
            counters.refused(error)
            throw error.apiError
        }
        guard rename(temporary, path(of: name.name)) == 0 else { throw APIError(.failed, "the image could not be stored") }
        counters.processed()
        return Stored(name: name, width: made.width, height: made.height)
    }

    /// Removes the image behind an `image_url` or `avatar_url` this server made, and its
    /// sizes (anything else is left alone).
    func remove(url: String?) {
        guard let name = StoredImageName(url: url) else { return }
        for file in name.allNames { unlink(path(of: file)) }
    }

    /// Removes every image and size this server stored (`POST /api/dev/reset`); any other
    /// file in the folder is left alone, whatever `UPLOAD_DIR` points at.
    func removeAll() throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: directory)
        where StoredImageName(name) != nil || StoredImageName.isSizeName(name) {
            unlink(path(of: name))
        }
    }

    /// The stored original of that name; nil for any name this server did not make or
    /// that is gone.
    func open(_ name: String) -> (FileBody, StoredImageName)? {
        guard let stored = StoredImageName(name), let file = FileBody.open(path: path(of: stored.name)) else { return nil }
        return (file, stored)
    }

    func path(of name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    private static func sniff(_ path: String) -> ImageFormat? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return ImageFormat(sniffing: (try? handle.read(upToCount: ImageFormat.signatureLength)) ?? Data())
    }
}
