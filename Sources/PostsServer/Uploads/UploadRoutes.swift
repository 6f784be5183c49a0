import Foundation
import HTTP
import Images

/// `GET /uploads/<name>` and `?width=N`: a stored image or one of its sizes, sent with
/// sendfile. Names are random and a file never changes, so the name (and width) is its
/// ETag and it may be cached for a year.
enum UploadRoutes {
    static func register(on routes: inout RouteTable, images: ImageStore) {
        routes.get("/uploads/:name", access: .open) { request, context in
            guard let name = context.parameters["name"], let stored = StoredImageName(name) else {
                throw APIError.notFound("no such upload")
            }
            let width = try Self.width(in: request)
            let etag = "\"\(width.map { stored.sizeName(width: $0) } ?? stored.name)\""
            var headers = HTTPHeaders([("ETag", etag), ("Cache-Control", "public, max-age=31536000, immutable")])
            // A bucket is read over the network: the heavy lane's work, never a standard worker's.
            if !images.store.isLocal { try context.http.requireHeavyLane() }
            let key = width.map { stored.sizeName(width: $0) } ?? stored.name
            let notModified = request.headers["If-None-Match"].map { Self.matches($0, etag) } ?? false
            let object: ObjectFile?
            do {
                // A revalidation or a redirect needs the object to exist, not its bytes.
                if notModified || images.store.publicURL(of: key) != nil {
                    let exists = try width.map { try images.ensureSize(of: stored, width: $0, lane: context.http.lane) }
                        ?? images.store.exists(stored.name)
                    guard exists else { throw APIError.notFound("no such upload") }
                    if notModified { return Response(status: .notModified, headers: headers) }
                    return Self.found(images.store.publicURL(of: key) ?? "")
                }
                object = try width.map { try images.openSize(of: stored, width: $0, lane: context.http.lane) } ?? images.open(stored)
            } catch let failure as StorageFailure {
                throw failure.apiError
            }
            guard let object else { throw APIError.notFound("no such upload") }
            guard let file = object.opened(with: FileBody.open(path:)) else {
                // A folder's file gone since it was found is gone; a fetched copy that cannot
                // be opened is the store's (or the disk's) trouble.
                if object.isScratch { throw StorageFailure.unavailable("cannot open \(object.path)").apiError }
                throw APIError.notFound("no such upload")
            }
            headers.add("Content-Type", (width == nil ? stored.format : stored.format.still).contentType)
            // The type was checked by the file's first bytes: no browser is to guess another.
            headers.add("X-Content-Type-Options", "nosniff")
            return Response(headers: headers, body: .file(file))
        }
    }

    /// `S3_PUBLIC_URL`: the object is fetched from there (a CDN, a public bucket).
    private static func found(_ location: String) -> Response {
        Response(status: .found, headers: HTTPHeaders([("Location", location), ("Cache-Control", "public, max-age=31536000, immutable")]))
    }

    /// `?width=N`: one of the five widths (400 for any other), or nil for the original.
    private static func width(in request: Request) throws(APIError) -> Int? {
        guard let text = request.query["width"] else { return nil }
        guard let width = Int(text), ImageResizer.widths.contains(width) else {
            let allowed = ImageResizer.widths.sorted().map(String.init).joined(separator: ", ")
            throw APIError(.malformed, "width must be one of \(allowed)")
        }
        return width
    }

    /// RFC 9110 §13.1.2: `*`, or any listed tag equal to ours (weak comparison).
    private static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}
