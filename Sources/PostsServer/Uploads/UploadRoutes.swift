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
            let file: FileBody?
            if let width {
                file = try images.openSize(of: stored, width: width, lane: context.http.lane)
            } else {
                file = images.open(name)?.0
            }
            guard let file else { throw APIError.notFound("no such upload") }
            if let match = request.headers["If-None-Match"], Self.matches(match, etag) {
                return Response(status: .notModified, headers: headers)
            }
            headers.add("Content-Type", (width == nil ? stored.format : stored.format.still).contentType)
            // The type was checked by the file's first bytes: no browser is to guess another.
            headers.add("X-Content-Type-Options", "nosniff")
            return Response(headers: headers, body: .file(file))
        }
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
