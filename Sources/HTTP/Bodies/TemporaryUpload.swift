#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file part being written to the upload directory under a temporary name, as it
/// arrives. It is deleted when dropped unless it became an `UploadedFile`: a refused,
/// broken or abandoned upload leaves nothing behind.
final class TemporaryUpload {
    let path: String
    private var descriptor: Int32
    private(set) var size = 0
    private var handedOver = false

    /// Creates the file in `directory` (the upload folder itself, so that keeping it is a
    /// rename on one filesystem). The name starts with a dot: it is never a servable upload.
    init(directory: String) throws(HTTPError) {
        let name = ".upload-" + String(UInt64.random(in: .min ... .max), radix: 16) + ".part"
        path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
        descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw HTTPError(.internalServerError, message: "the upload could not be stored")
        }
    }

    func write(_ bytes: ArraySlice<UInt8>) throws(HTTPError) {
        let failed = bytes.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return true }
                offset += written
            }
            return false
        }
        if failed { throw HTTPError(.internalServerError, message: "the upload could not be stored") }
        size += bytes.count
    }

    /// The finished file, now owned by the returned value.
    func complete(as head: MultipartPartHead) throws(HTTPError) -> UploadedFile {
        let status = close(descriptor)
        descriptor = -1
        guard status == 0 else { throw HTTPError(.internalServerError, message: "the upload could not be stored") }
        handedOver = true
        return UploadedFile(fieldName: head.name, filename: head.filename, contentType: head.contentType, size: size,
                            temporaryPath: path)
    }

    deinit {
        if descriptor >= 0 { systemClose(descriptor) }
        if !handedOver { unlink(path) }
    }
}
