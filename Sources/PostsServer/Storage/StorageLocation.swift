import Foundation

/// Where stored images live (API.md `STORAGE_URL`): a folder, or a bucket of any
/// S3-compatible store, `s3://bucket[/prefix]?endpoint=http://host:port&region=…&path_style=true`.
/// Parsed once at start; a malformed value stops the start with its reason.
public enum StorageLocation: Sendable, Equatable {
    case file(directory: String)
    case s3(S3Location)

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public init(parsing text: String) throws(Invalid) {
        if text.hasPrefix("file://") {
            let directory = String(text.dropFirst("file://".count))
            guard directory.hasPrefix("/") else {
                throw Invalid(description: "STORAGE_URL file:// needs an absolute folder (file:///srv/uploads), not \"\(text)\"")
            }
            self = .file(directory: directory)
        } else if text.hasPrefix("s3://") {
            self = .s3(try S3Location(parsing: text))
        } else {
            throw Invalid(description: "STORAGE_URL must start with file:// or s3://, not \"\(text)\"")
        }
    }

    /// What `/api/instance` and the logs say it is.
    public var isS3: Bool {
        if case .s3 = self { return true }
        return false
    }
}

/// A bucket, the prefix of our keys in it, and how to reach it.
public struct S3Location: Sendable, Equatable, CustomStringConvertible {
    public let bucket: String
    /// Empty, or ends with `/`: every key is `prefix + name`.
    public let prefix: String
    /// `http(s)://host[:port]` with no path; AWS's regional endpoint when not given.
    public let endpoint: URLComponents
    public let region: String
    /// `https://endpoint/bucket/key` rather than `https://bucket.endpoint/key`: what most
    /// self-hosted stores (SeaweedFS, MinIO) want.
    public let pathStyle: Bool

    init(parsing text: String) throws(StorageLocation.Invalid) {
        func invalid(_ reason: String) -> StorageLocation.Invalid {
            StorageLocation.Invalid(description: "STORAGE_URL \(reason): \"\(text)\"")
        }
        let rest = text.dropFirst("s3://".count)
        let (location, query) = rest.firstIndex(of: "?").map { (rest[..<$0], rest[rest.index(after: $0)...]) } ?? (rest, "")
        let segments = location.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        bucket = String(segments[0])
        // S3's bucket naming rules: what also works as a host name (no empty label between
        // two dots), and is not an IPv4 address (which a virtual host would then read as one).
        guard (3...63).contains(bucket.count), bucket.utf8.allSatisfy({ Self.isBucketByte($0) }),
              bucket.first != "-", bucket.first != ".", bucket.last != "-", bucket.last != ".",
              !bucket.contains(".."), !Self.isIPv4Address(bucket) else {
            throw invalid("needs a bucket name of 3 to 63 lowercase letters, digits, dots and hyphens")
        }
        let path = segments.count > 1 ? segments[1].split(separator: "/").joined(separator: "/") : ""
        guard path.utf8.allSatisfy({ Self.isPrefixByte($0) }), !path.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }) else {
            throw invalid("has a prefix with characters other than letters, digits and - _ . / ")
        }
        prefix = path.isEmpty ? "" : path + "/"
        var endpointText: String?
        var region = "us-east-1"
        var pathStyle: Bool?
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? "") : ""
            switch name {
            case "endpoint": endpointText = value
            case "region":
                guard !value.isEmpty, value.utf8.allSatisfy({ Self.isPrefixByte($0) && $0 != UInt8(ascii: "/") }) else {
                    throw invalid("has a malformed region")
                }
                region = value
            case "path_style":
                guard value == "true" || value == "false" else { throw invalid("path_style must be true or false") }
                pathStyle = value == "true"
            default: throw invalid("has an unknown parameter \(name) (endpoint, region, path_style)")
            }
        }
        let endpoint = URLComponents(string: endpointText ?? "https://s3.\(region).amazonaws.com")
        guard let endpoint, endpoint.scheme == "http" || endpoint.scheme == "https", let host = endpoint.host, !host.isEmpty,
              endpoint.path.isEmpty || endpoint.path == "/", endpoint.query == nil, endpoint.user == nil else {
            throw invalid("needs endpoint=http(s)://host[:port] with nothing after the port")
        }
        var bare = URLComponents()
        bare.scheme = endpoint.scheme
        bare.host = endpoint.host
        bare.port = endpoint.port
        self.endpoint = bare
        self.region = region
        // A bucket with dots cannot be a TLS host name label: path style for it.
        self.pathStyle = pathStyle ?? (endpointText != nil || bucket.contains("."))
    }

    public var description: String { "s3://\(bucket)/\(prefix) at \(endpoint.string ?? "?")" }

    private static func isIPv4Address(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
    }

    private static func isBucketByte(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }

    private static func isPrefixByte(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) || (0x30...0x39).contains(byte)
            || [UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "/")].contains(byte)
    }
}
