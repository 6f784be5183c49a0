import Foundation
import HTTP
import Logging

/// `GET /console` and its assets (API.md "The console"). Every answer under `/console`
/// carries the same security headers: scripts, styles and connections from this origin
/// only (no inline script or style attribute anywhere in the console), never framed, no
/// referrer, no sniffing.
enum ConsoleRoutes {
    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Content-Type-Options", "nosniff"),
    ]

    static func register(on routes: inout RouteTable, assets: ConsoleAssets?) {
        routes.get("/console", access: .open) { _, _ in
            guard let assets else { return answer(.serviceUnavailable, "the console's files are not installed (set CONSOLE_DIR)") }
            return Response(headers: headers([("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache")]),
                            body: assets.page)
        }
        routes.get("/console/assets/:version/:file", access: .open) { request, context in
            guard let assets, context.parameters["version"] == assets.version,
                  let name = context.parameters["file"], let asset = assets.files[name] else {
                return answer(.notFound, "no such console file")
            }
            let etag = "\"\(assets.version)\""
            let cached = headers([("ETag", etag), ("Cache-Control", "public, max-age=31536000, immutable")])
            if request.headers["If-None-Match"]?.contains(etag) == true { return Response(status: .notModified, headers: cached) }
            var sent = cached
            sent.add("Content-Type", asset.contentType)
            return Response(headers: sent, body: asset.bytes)
        }
    }

    private static func headers(_ fields: [(String, String)]) -> HTTPHeaders {
        HTTPHeaders(securityHeaders + fields)
    }

    private static func answer(_ status: HTTPStatus, _ message: String) -> Response {
        Response(status: status, headers: headers([("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")]),
                 body: Array("\(message)\n".utf8))
    }
}
