import Foundation
import HTTP

/// Stored images as files in one folder (`STORAGE_URL=file:///…`, or `UPLOAD_DIR`): what a
/// single instance, or several sharing a file system, use. Only names this server makes are
/// ever asked for, so a name cannot reach outside the folder; a symbolic link planted in
/// it is never followed.
struct FileObjectStore: ObjectStore {
    let directory: String

    init(directory: String) throws {
        self.directory = directory.hasSuffix("/") ? directory : directory + "/"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    var isLocal: Bool { true }

    func path(of name: String) -> String { directory + name }

    /// A hard link, not a copy: the made file is whole before its name appears, and
    /// `link` refuses an existing name, which is the conditional create.
    func put(_ name: String, from path: String, contentType: String, ifAbsent: Bool) throws(StorageFailure) -> Bool {
        if link(path, self.path(of: name)) == 0 { return true }
        let error = errno
        if error == EEXIST {
            if ifAbsent { return false }
            guard rename(path, self.path(of: name)) == 0 else { throw Self.failure("replace \(name)") }
            return true
        }
        // Another file system (the made file's folder is UPLOAD_DIR): copy, then rename into place.
        guard error == EXDEV else { throw Self.failure("store \(name)", error) }
        let temporary = self.path(of: ".upload-\(name).copy.part")
        defer { unlink(temporary) }
        do {
            try FileManager.default.copyItem(atPath: path, toPath: temporary)
        } catch {
            throw .unavailable("cannot copy \(name) into \(directory): \(error)")
        }
        if ifAbsent {
            guard link(temporary, self.path(of: name)) == 0 else {
                if errno == EEXIST { return false }
                throw Self.failure("store \(name)")
            }
            return true
        }
        guard rename(temporary, self.path(of: name)) == 0 else { throw Self.failure("store \(name)") }
        return true
    }

    func open(_ name: String, scratch: String) throws(StorageFailure) -> ObjectFile? {
        // lstat: a link planted in the folder is no object (the reader never follows one either).
        Self.isRegularFile(path(of: name)) ? ObjectFile(path: path(of: name), isScratch: false) : nil
    }

    func withLocalCopy<T>(of name: String, scratch: String, _ body: (String) throws -> T) throws -> T? {
        // lstat, not fileExists: libvips opens the file by path and would follow a link.
        guard Self.isRegularFile(path(of: name)) else { return nil }
        return try body(path(of: name))
    }

    func exists(_ name: String) throws(StorageFailure) -> Bool {
        Self.isRegularFile(path(of: name))
    }

    func delete(_ names: [String]) throws(StorageFailure) {
        for name in names where unlink(path(of: name)) != 0 && errno != ENOENT {
            throw Self.failure("remove \(name)")
        }
    }

    /// The whole folder in one page, in name order; `marker` is not needed.
    func list(after marker: String?) throws(StorageFailure) -> (names: [String], next: String?) {
        guard marker == nil else { return ([], nil) }
        do {
            let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            return (names.filter { !$0.hasPrefix(".") && Self.isRegularFile(path(of: $0)) }.sorted(), nil)
        } catch {
            throw .unavailable("cannot list \(directory): \(error)")
        }
    }

    func probe() throws(StorageFailure) {
        guard access(directory, W_OK) == 0 else { throw Self.failure("write to \(directory)") }
    }

    func publicURL(of name: String) -> String? { nil }

    static func isRegularFile(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
    }

    private static func failure(_ what: String, _ error: Int32 = errno) -> StorageFailure {
        .unavailable("cannot \(what): \(String(cString: strerror(error)))")
    }
}
