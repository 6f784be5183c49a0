#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open regular file to send as a response body. The descriptor closes when the last
/// reference goes: after the response is sent, or with a connection that broke first.
public final class FileBody: Sendable {
    let descriptor: Int32
    public let length: Int

    private init(descriptor: Int32, length: Int) {
        self.descriptor = descriptor
        self.length = length
    }

    /// The file at `path` if it is a regular file that can be read; nil otherwise (absent,
    /// a directory, a device, a symbolic link): the caller answers 404. A link is never
    /// followed, so one planted in a served folder cannot serve a file from elsewhere.
    public static func open(path: String) -> FileBody? {
        let fd = systemOpen(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            systemClose(fd)
            return nil
        }
        return FileBody(descriptor: fd, length: Int(status.st_size))
    }

    deinit { systemClose(descriptor) }
}
