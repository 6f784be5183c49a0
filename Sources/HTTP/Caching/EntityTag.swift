/// Weak entity tags (RFC 9110 §8.8.3) made from an answer's bytes, and `If-None-Match`.
public enum EntityTag {
    /// `W/"<16 hex digits>"`: FNV-1a, 64 bits, of the uncompressed body. Made from the bytes
    /// themselves, so the tag changes whenever anything in the answer does (a like, a
    /// comment, an edit, an author's new name) without any table of versions to keep right.
    /// Weak because the gzip and identity forms of an answer share it.
    public static func weak(for body: [UInt8]) -> String {
        let hex = String(fnv1a64(body), radix: 16)
        return "W/\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
    }

    /// FNV-1a: a few instructions a byte, no tables; collisions only need to be unlikely
    /// between two versions of one answer, not resistant to an attacker (a client can only
    /// fool its own cache).
    static func fnv1a64(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        bytes.withUnsafeBufferPointer { buffer in
            for byte in buffer {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            }
        }
        return hash
    }

    /// Whether `If-None-Match` names `tag` by weak comparison (the opaque parts are equal,
    /// `W/` ignored), or is `*`. Every field and every list element counts.
    public static func ifNoneMatch(_ headers: HTTPHeaders, matches tag: String) -> Bool {
        let values = headers.values(of: "If-None-Match")
        guard !values.isEmpty else { return false }
        let opaque = Substring(tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag)
        for value in values {
            if value.trimmingHTTPWhitespace() == "*" { return true }
            if quotedTags(in: value).contains(opaque) { return true }
        }
        return false
    }

    /// The opaque tags (quotes included) of a list like `W/"a", "b"`. A quoted tag may hold
    /// a comma, so the list is scanned quote to quote rather than split on commas.
    static func quotedTags(in value: String) -> [Substring] {
        var tags: [Substring] = []
        var rest = Substring(value)
        while let open = rest.firstIndex(of: "\"") {
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(of: "\"") else { break }
            tags.append(rest[open...close])
            rest = rest[rest.index(after: close)...]
        }
        return tags
    }
}

extension Response {
    /// The answer with its weak ETag, or 304 when the request's `If-None-Match` names it.
    /// Only a 200 with its body in memory has one. The 304 keeps what a 200 would have said
    /// about caching (ETag, Vary, Cache-Control; RFC 9110 §15.4.5) and carries no body.
    public func withWeakETag(for head: RequestHead) -> Response {
        guard status == .ok, case .bytes(let bytes) = body else { return self }
        let tag = EntityTag.weak(for: bytes)
        var response = self
        response.headers.add("ETag", tag)
        guard head.method == .GET || head.method == .HEAD,
              EntityTag.ifNoneMatch(head.headers, matches: tag) else { return response }
        var headers = HTTPHeaders()
        for field in response.headers where !["content-type", "content-length"].contains(field.name.lowercased()) {
            headers.add(field.name, field.value)
        }
        // The 200 would say it at serialization; a 304 is not compressed, so say it here.
        if response.isCompressibleJSON { headers.addVary("Accept-Encoding") }
        return Response(status: .notModified, headers: headers, body: [])
    }
}
