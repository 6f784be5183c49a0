/// gzip of JSON answers, applied by the server to every response as it is serialized
/// (`ServerCore.finish`), so every route gets it and none has to ask. It runs on the thread
/// that made the response: a worker for routes that block, so compression never sits on an
/// event loop for them.
extension Response {
    /// Below this, gzip's header and trailer (18 bytes) and the CPU cost more than the bytes
    /// saved are worth (API.md: 1 KiB).
    public static let compressionThreshold = 1024

    /// A JSON answer with a body in memory: what may be compressed. Files (images) are sent
    /// by sendfile as they are, and streams (SSE) must reach the client as written.
    var isCompressibleJSON: Bool {
        guard !status.forbidsBody, case .bytes = body, let type = headers["Content-Type"] else { return false }
        return type.lowercased().hasPrefix("application/json") && !headers.contains("Content-Encoding")
    }

    /// The response as it goes to this request: every compressible JSON answer says
    /// `Vary: Accept-Encoding` (compressed or not, since the same URL may be compressed for
    /// another client, or once it grows), and one of 1 KiB or more is gzip when the request
    /// allows it. HEAD is treated as GET, so its Content-Length is the compressed length.
    public func compressed(for head: RequestHead) -> Response {
        guard isCompressibleJSON, case .bytes(let bytes) = body else { return self }
        var response = self
        response.headers.addVary("Accept-Encoding")
        guard bytes.count >= Self.compressionThreshold, AcceptEncoding.allowsGzip(head.headers),
              let gzip = Gzip.compress(bytes), gzip.count < bytes.count else { return response }
        response.headers.add("Content-Encoding", "gzip")
        response.body = .bytes(gzip)
        return response
    }
}

extension HTTPHeaders {
    /// Adds `name` to `Vary` unless a `Vary` field names it already (or is `*`).
    mutating func addVary(_ name: String) {
        let named = tokens(of: "Vary")
        guard !named.contains(name.lowercased()), !named.contains("*") else { return }
        add("Vary", name)
    }
}
