import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A multipart/form-data body as a handler receives it: the text fields in memory, the
/// files already on disk (streamed there as they arrived).
public struct MultipartForm: Sendable {
    public struct Field: Sendable, Equatable {
        public let name: String
        public let value: String
    }

    public var fields: [Field]
    public var files: [UploadedFile]

    public init(fields: [Field] = [], files: [UploadedFile] = []) {
        self.fields = fields
        self.files = files
    }

    /// The first text field of that name.
    public subscript(field name: String) -> String? {
        fields.first { $0.name == name }?.value
    }

    /// The first file sent under that field name.
    public func file(named name: String) -> UploadedFile? {
        files.first { $0.fieldName == name }
    }
}

/// A file part written to a temporary file in the upload directory. The server deletes it
/// once the handler has returned unless the handler kept it (and, as a safety net, when
/// the last reference goes): no half-written or unwanted upload is ever left behind.
public final class UploadedFile: Sendable {
    public let fieldName: String
    public let filename: String?
    public let contentType: String?
    public let size: Int
    public let temporaryPath: String
    private let state = Atomic<UInt8>(State.temporary)

    private enum State {
        static let temporary: UInt8 = 0
        static let kept: UInt8 = 1
        static let discarded: UInt8 = 2
    }

    public init(fieldName: String, filename: String?, contentType: String?, size: Int, temporaryPath: String) {
        self.fieldName = fieldName
        self.filename = filename
        self.contentType = contentType
        self.size = size
        self.temporaryPath = temporaryPath
    }

    /// Moves the file to `path` with rename(2): atomic on the same filesystem, so a reader
    /// sees no file or the whole file, never a part.
    public func keep(at path: String) throws(UploadError) {
        guard state.load(ordering: .acquiring) == State.temporary else {
            throw UploadError("keeping an upload that is gone", errno: ENOENT)
        }
        guard rename(temporaryPath, path) == 0 else { throw UploadError("rename to \(path)", errno: errno) }
        state.store(State.kept, ordering: .releasing)
    }

    /// Deletes the temporary file unless it was kept.
    func discard() {
        if state.compareExchange(expected: State.temporary, desired: State.discarded, ordering: .acquiringAndReleasing).exchanged {
            unlink(temporaryPath)
        }
    }

    deinit { discard() }
}

extension MultipartForm {
    func discardUnkeptFiles() {
        for file in files { file.discard() }
    }
}

/// A file operation on an upload that failed.
public struct UploadError: Error, Sendable, CustomStringConvertible {
    public let operation: String
    public let errno: Int32

    public init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String { "\(operation) failed (errno \(errno))" }
}
