import CLibCurl
import Foundation

/// One GET of a provider's JSON document (its discovery document, its key set) with
/// libcurl, on the calling thread (never an event loop: `ProviderKeys` fetches on its own
/// thread): https (or http to loopback, for a provider on this machine), no redirects to
/// other schemes, a bounded answer, and how long the answer may be kept
/// (`Cache-Control: max-age`).
struct DocumentFetch {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    struct Answer {
        let body: [UInt8]
        /// `max-age` of its `Cache-Control` (nil without one; zero for `no-store`/`no-cache`).
        let maxAge: Duration?
    }

    /// Discovery documents and key sets are a few kilobytes.
    static let maxBytes = 256 * 1024

    static func get(_ url: String, cancellation: CurlTransfer.Cancellation = .init()) throws -> Answer {
        let transfer = try CurlTransfer(cancellation: cancellation)
        let body = CurlTransfer.BoundedBody(limit: maxBytes)
        var ok = transfer.setShared(connectTimeoutSeconds: 5, timeoutSeconds: 10)
        ok = ok && transfer.set(CURLOPT_URL, url) && transfer.set(CURLOPT_PROTOCOLS_STR, "http,https")
        ok = ok && transfer.set(CURLOPT_REDIR_PROTOCOLS_STR, "https") && transfer.set(CURLOPT_FOLLOWLOCATION, 1)
        ok = ok && transfer.set(CURLOPT_MAXREDIRS, 3) && transfer.set(CURLOPT_USERAGENT, "posts-server")
        ok = ok && transfer.collect(into: body)
        guard ok else { throw Failure(description: "libcurl refused an option for \(url)") }
        let result = withExtendedLifetime(body) { transfer.perform() }
        guard result.code == 0 else {
            throw Failure(description: body.cutShort ? "\(url) answered more than \(maxBytes) bytes" : "\(url): \(result.message)")
        }
        guard (200..<300).contains(result.responseCode) else { throw Failure(description: "\(url) answered \(result.responseCode)") }
        let cacheControl = posts_curl_response_header(transfer.handle, "Cache-Control").map { String(cString: $0) }
        return Answer(body: body.kept, maxAge: cacheControl.flatMap(Self.maxAge))
    }

    /// `max-age=N` of a Cache-Control value; zero when it forbids keeping the answer.
    static func maxAge(_ value: String) -> Duration? {
        var age: Duration?
        for directive in value.lowercased().split(separator: ",") {
            let trimmed = directive.trimmingCharacters(in: .whitespaces)
            if trimmed == "no-store" || trimmed == "no-cache" { return .zero }
            if trimmed.hasPrefix("max-age="), let seconds = Int64(trimmed.dropFirst(8)), seconds >= 0 {
                age = .seconds(min(seconds, 7 * 86_400))
            }
        }
        return age
    }
}
