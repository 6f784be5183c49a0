#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file part being written to the upload directory under a temporary name, as it
/// arrives. The file is created (and, if refused, removed) on the connection's thread, so
/// that a client that sees an answer finds nothing left behind; its bytes are written by
/// the upload writers (`UploadFile`), off that thread. It is deleted when dropped unless
/// it became an `UploadedFile`: a refused, broken or abandoned upload leaves nothing.
final class TemporaryUpload {
    let path: String
    private let file: UploadFile
    private let writes: UploadWrites
    /// Bytes taken so far (queued or written).
    private(set) var size = 0
    private var handedOver = false

    /// Creates the file in `directory` (the upload folder itself, so that keeping it is a
    /// rename on one filesystem). The name starts with a dot: it is never a servable upload.
    init(directory: String, writes: UploadWrites) throws(HTTPError) {
        let name = ".upload-" + String(UInt64.random(in: .min ... .max), radix: 16) + ".part"
        path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Self.storeFailed }
        file = UploadFile(descriptor: descriptor, writes: writes)
        self.writes = writes
    }

    func write(_ bytes: ArraySlice<UInt8>) throws(HTTPError) {
        if writes.hasFailed { throw Self.storeFailed }
        file.append(Array(bytes))
        size += bytes.count
    }

    /// The finished file, now owned by the returned value. Its last bytes may still be on
    /// their way to the disk: the body is handed to its handler only once every write of it
    /// is done (`MultipartBodyConsumer.isBehind`).
    func complete(as head: MultipartPartHead) throws(HTTPError) -> UploadedFile {
        if writes.hasFailed { throw Self.storeFailed }
        file.close()
        handedOver = true
        return UploadedFile(fieldName: head.name, filename: head.filename, contentType: head.contentType, size: size,
                            temporaryPath: path)
    }

    static let storeFailed = HTTPError(.internalServerError, message: "the upload could not be stored")

    deinit {
        if !handedOver {
            unlink(path)
            file.abandon()
        }
    }
}
