import Foundation
import HTTP

/// Stored images as objects of an S3-compatible bucket (`STORAGE_URL=s3://…`): instances
/// share nothing but the database and the bucket. Objects are fetched to a scratch file in
/// the upload folder and sent from there (sendfile, bounded memory), the file unlinked as
/// soon as it is open.
struct S3ObjectStore: ObjectStore {
    let client: S3Client
    /// `S3_PUBLIC_URL` without a trailing slash, when set.
    let publicBase: String?

    var isLocal: Bool { false }

    private func key(_ name: String) -> String { client.location.prefix + name }

    func put(_ name: String, from path: String, contentType: String, ifAbsent: Bool) throws(StorageFailure) -> Bool {
        // If-None-Match: * is S3's conditional create: a 412 says another instance was first.
        let answer = try client.perform(.put, "PUT", key: key(name), headers: ifAbsent ? ["If-None-Match: *"] : [],
                                        upload: .file(path: path, contentType: contentType), timeoutSeconds: 120)
        guard answer.status != 412 else { return false }
        guard (200..<300).contains(answer.status) else { throw .refused("PUT \(name) answered \(answer.status)") }
        return true
    }

    func open(_ name: String, scratch: String) throws(StorageFailure) -> ObjectFile? {
        guard try fetch(name, to: scratch) else { return nil }
        return ObjectFile(path: scratch, isScratch: true)
    }

    func withLocalCopy<T>(of name: String, scratch: String, _ body: (String) throws -> T) throws -> T? {
        guard try fetch(name, to: scratch) else { return nil }
        defer { unlink(scratch) }
        return try body(scratch)
    }

    /// GET into a new file at `scratch`; false (and no file) when there is no such object.
    private func fetch(_ name: String, to scratch: String) throws(StorageFailure) -> Bool {
        let descriptor = Foundation.open(scratch, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .unavailable("cannot write \(scratch): \(String(cString: strerror(errno)))") }
        var kept = false
        defer {
            close(descriptor)
            if !kept { unlink(scratch) }
        }
        let answer = try client.perform(.get, "GET", key: key(name), into: .file(descriptor), timeoutSeconds: 120)
        guard answer.status != 404 else { return false }
        guard answer.status == 200 else { throw .refused("GET \(name) answered \(answer.status)") }
        kept = true
        return true
    }

    func exists(_ name: String) throws(StorageFailure) -> Bool {
        let answer = try client.perform(.head, "HEAD", key: key(name), timeoutSeconds: 10)
        return answer.status == 200
    }

    func delete(_ names: [String]) throws(StorageFailure) {
        for name in names {
            // S3 answers 204 whether or not the object was there.
            let answer = try client.perform(.delete, "DELETE", key: key(name), timeoutSeconds: 10)
            guard (200..<300).contains(answer.status) || answer.status == 404 else {
                throw .refused("DELETE \(name) answered \(answer.status)")
            }
        }
    }

    func list(after marker: String?) throws(StorageFailure) -> (names: [String], next: String?) {
        var query = [("list-type", "2"), ("prefix", client.location.prefix)]
        if let marker { query.append(("continuation-token", marker)) }
        let answer = try client.perform(.list, "GET", key: nil, query: query)
        guard answer.status == 200, let page = S3Response.listPage(answer.body) else {
            throw .refused("the bucket's listing could not be read (HTTP \(answer.status))")
        }
        let prefix = client.location.prefix
        // Only our keys' last segment: a "folder" below the prefix is not ours.
        let names = page.keys.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }.filter { !$0.contains("/") }
        return (names, page.nextToken)
    }

    /// A listing of one key under our prefix: the bucket exists and the credentials may
    /// list it (which `storage copy` and the dev reset need), and a refusal comes with S3's
    /// words (a HEAD's has no body to carry them).
    func probe() throws(StorageFailure) {
        let query = [("list-type", "2"), ("max-keys", "1"), ("prefix", client.location.prefix)]
        let answer = try client.perform(.list, "GET", key: nil, query: query, timeoutSeconds: 5)
        guard answer.status == 200 else {
            throw .refused(answer.status == 404 ? "the bucket \(client.location.bucket) does not exist" : "listing answered \(answer.status)")
        }
    }

    func publicURL(of name: String) -> String? {
        publicBase.map { $0 + "/" + S3Request.encode(key(name), keepingSlashes: true) }
    }
}
