import CZlib

/// Weak entity tags (RFC 9110 §8.8.3) made from an answer's bytes, and `If-None-Match`.
public enum EntityTag {
    /// `W/"<16 hex digits>"`: 64 bits of checksums of the uncompressed body. Made from the bytes
    /// themselves, so the tag changes whenever anything in the answer does (a like, a
    /// comment, an edit, an author's new name) without any table of versions to keep right.
    /// Weak because the gzip and identity forms of an answer share it.
    public static func weak(for body: [UInt8]) -> String {
        let hex = String(checksum64(body), radix: 16)
        return "W/\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
    }

    /// zlib's CRC-32 and Adler-32 side by side: optimized C whatever the build (a byte
    /// loop in Swift ran at a fraction of the speed in the debug build CI's fault run uses,
    /// over pages of 100 posts), and two unrelated sums make a collision between two
    /// versions of one answer unlikely. Not resistant to an attacker, who could only fool
    /// its own cache.
    static func checksum64(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { buffer -> UInt64 in
            let length = z_size_t(buffer.count)
            let crc = crc32_z(0, buffer.baseAddress, length)
            let adler = adler32_z(1, buffer.baseAddress, length)
            return UInt64(crc & 0xFFFF_FFFF) << 32 | UInt64(adler & 0xFFFF_FFFF)
        }
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
