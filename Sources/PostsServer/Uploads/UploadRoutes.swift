import Foundation
import HTTP

/// `GET /uploads/<name>`: a stored image, sent with sendfile. Names are random and a file
/// never changes, so the name is its ETag and it may be cached for a year.
enum UploadRoutes {
    static func register(on routes: inout RouteTable, images: ImageStore) {
        routes.get("/uploads/:name", access: .open) { request, context in
            guard let name = context.parameters["name"], let (file, type) = images.open(name) else {
                throw APIError.notFound("no such upload")
            }
            let etag = "\"\(name)\""
            var headers = HTTPHeaders([("ETag", etag), ("Cache-Control", "public, max-age=31536000, immutable")])
            if let match = request.headers["If-None-Match"], Self.matches(match, etag) {
                return Response(status: .notModified, headers: headers)
            }
            headers.add("Content-Type", type.contentType)
            // The type was checked by the file's first bytes: no browser is to guess another.
            headers.add("X-Content-Type-Options", "nosniff")
            return Response(headers: headers, body: .file(file))
        }
    }

    /// RFC 9110 §13.1.2: `*`, or any listed tag equal to ours (weak comparison).
    private static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}
