/// The URL of one S3 request, path style or virtual-host style. libcurl signs what it is
/// given (`CURLOPT_AWS_SIGV4`), and the libcurl here neither sorts nor encodes the query
/// for the signature: the query is written here already in SigV4's canonical form (sorted
/// by name, RFC 3986 encoding), so the string sent and the string signed are the same.
struct S3Request: Equatable {
    let url: String

    /// An object's URL (`key` is the whole key, prefix included), or the bucket's with a nil key.
    init(_ location: S3Location, key: String?, query: [(String, String)] = []) {
        let scheme = location.endpoint.scheme ?? "https"
        let host = location.endpoint.host ?? ""
        let port = location.endpoint.port.map { ":\($0)" } ?? ""
        let encodedKey = key.map { Self.encode($0, keepingSlashes: true) }
        // The bucket itself: `/bucket` in path style, `/` on its own host.
        let path = location.pathStyle ? "/" + location.bucket + (encodedKey.map { "/" + $0 } ?? "") : "/" + (encodedKey ?? "")
        let authority = location.pathStyle ? host + port : location.bucket + "." + host + port
        let canonicalQuery = query.sorted { $0.0 < $1.0 }
            .map { Self.encode($0.0, keepingSlashes: false) + "=" + Self.encode($0.1, keepingSlashes: false) }
            .joined(separator: "&")
        url = scheme + "://" + authority + path + (canonicalQuery.isEmpty ? "" : "?" + canonicalQuery)
    }

    /// RFC 3986 unreserved characters as they are, everything else `%XX` (upper case), as
    /// SigV4 canonicalizes; a key's slashes stay.
    static func encode(_ text: String, keepingSlashes: Bool) -> String {
        var out = ""
        for byte in text.utf8 {
            let unreserved = (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "~")
            if unreserved || (keepingSlashes && byte == UInt8(ascii: "/")) {
                out.append(Character(UnicodeScalar(byte)))
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
