import Foundation
import Testing
@testable import PostsServer

/// `STORAGE_URL` (API.md "Storage for many instances"): a folder or a bucket, read once at
/// start; anything malformed stops the start with a reason naming the variable.
@Suite struct StorageLocationTests {
    private func s3(_ text: String) throws -> S3Location {
        guard case .s3(let location) = try StorageLocation(parsing: text) else {
            Issue.record("\(text) is not an s3:// location")
            throw StorageLocation.Invalid(description: "not s3")
        }
        return location
    }

    private func refusal(_ text: String) -> String? {
        do {
            _ = try StorageLocation(parsing: text)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func file_isAnAbsoluteFolder() throws {
        #expect(try StorageLocation(parsing: "file:///srv/uploads") == .file(directory: "/srv/uploads"))
        #expect(try StorageLocation(parsing: "file:///srv/uploads/") == .file(directory: "/srv/uploads/"))
        #expect(try StorageLocation(parsing: "file:///srv/uploads").isS3 == false)
    }

    @Test func file_withARelativePath_isRefused() {
        for text in ["file://uploads", "file://./uploads", "file://"] {
            let reason = refusal(text)
            #expect(reason?.hasPrefix("STORAGE_URL file:// needs an absolute folder") == true, "\(text): \(reason ?? "accepted")")
        }
    }

    @Test func otherSchemes_areRefused() {
        for text in ["", "/srv/uploads", "http://bucket.example.com", "S3://bucket", "FILE:///srv", "s3:/bucket", "gs://bucket"] {
            let reason = refusal(text)
            #expect(reason?.hasPrefix("STORAGE_URL must start with file:// or s3://") == true, "\(text): \(reason ?? "accepted")")
        }
    }

    @Test func s3_withEverything() throws {
        let location = try s3("s3://posts-images/uploads/2024?endpoint=http://127.0.0.1:8333&region=eu-west-1&path_style=true")
        #expect(location.bucket == "posts-images")
        #expect(location.prefix == "uploads/2024/")
        #expect(location.endpoint.string == "http://127.0.0.1:8333")
        #expect(location.region == "eu-west-1")
        #expect(location.pathStyle)
        #expect(try StorageLocation(parsing: "s3://posts-images").isS3)
    }

    /// Nothing but the bucket: AWS's regional endpoint over https, the bucket its own host.
    @Test func s3_defaults_areAWSAndVirtualHosts() throws {
        let location = try s3("s3://posts-images")
        #expect(location.prefix == "")
        #expect(location.region == "us-east-1")
        #expect(location.endpoint.string == "https://s3.us-east-1.amazonaws.com")
        #expect(!location.pathStyle)
        let regional = try s3("s3://posts-images?region=ap-southeast-2")
        #expect(regional.endpoint.string == "https://s3.ap-southeast-2.amazonaws.com")
        #expect(!regional.pathStyle)
        // Path style is asked for, and a self-hosted endpoint is path style unless told otherwise.
        #expect(try s3("s3://posts-images?path_style=true").pathStyle)
        #expect(try s3("s3://posts-images?endpoint=https://minio.example.com").pathStyle)
        #expect(try !s3("s3://posts-images?endpoint=https://r2.example.com&path_style=false").pathStyle)
    }

    /// A bucket with dots is no TLS host label (`a.b.s3.amazonaws.com` misses the wildcard).
    @Test func aDottedBucket_isPathStyle() throws {
        let location = try s3("s3://images.example.com")
        #expect(location.bucket == "images.example.com")
        #expect(location.pathStyle)
    }

    @Test func prefixes_areNormalized() throws {
        #expect(try s3("s3://bucket/").prefix == "")
        #expect(try s3("s3://bucket/a").prefix == "a/")
        #expect(try s3("s3://bucket/a/").prefix == "a/")
        #expect(try s3("s3://bucket//a//b/").prefix == "a/b/")
        #expect(try s3("s3://bucket/A_b-c.d/e").prefix == "A_b-c.d/e/")
    }

    @Test func badBucketNames_areRefused() {
        let names = ["", "ab", String(repeating: "a", count: 64), "Posts", "posts_images", "posts images", "-posts", "posts-",
                     ".posts", "posts.", "pösts", "posts..images", "192.168.1.1"]
        for name in names {
            let reason = refusal("s3://\(name)/prefix")
            #expect(reason?.hasPrefix("STORAGE_URL needs a bucket name of 3 to 63") == true, "\(name): \(reason ?? "accepted")")
        }
        #expect(refusal("s3://" + String(repeating: "a", count: 63)) == nil)
        #expect(refusal("s3://a-1.b-2") == nil)
        #expect(refusal("s3://10.0.0.1.example") == nil)
        #expect(refusal("s3://1.2.3") == nil)
    }

    @Test func oddPrefixes_areRefused() {
        for prefix in ["..", "a/../b", "a/./b", ".", "a b", "a%2Fb", "a\\b", "a+b", "ä", "a#b", "a:b"] {
            let reason = refusal("s3://bucket/\(prefix)")
            #expect(reason?.hasPrefix("STORAGE_URL has a prefix with characters other than") == true, "\(prefix): \(reason ?? "accepted")")
            #expect(reason?.hasSuffix("\"s3://bucket/\(prefix)\"") == true)
        }
    }

    @Test func parameters_areOnlyTheKnownOnes() {
        for query in ["bucket=x", "Region=us-east-1", "endpoint=http://h&acl=public", "pathstyle=true"] {
            let reason = refusal("s3://bucket?\(query)")
            #expect(reason?.hasPrefix("STORAGE_URL has an unknown parameter") == true, "\(query): \(reason ?? "accepted")")
        }
        for query in ["path_style=yes", "path_style=1", "path_style=", "path_style", "path_style=TRUE"] {
            #expect(refusal("s3://bucket?\(query)")?.hasPrefix("STORAGE_URL path_style must be true or false") == true, "\(query)")
        }
        for query in ["region=", "region=us/east", "region=us east"] {
            #expect(refusal("s3://bucket?\(query)")?.hasPrefix("STORAGE_URL has a malformed region") == true, "\(query)")
        }
    }

    @Test func endpoints_areASchemeAHostAndAPort() throws {
        #expect(try s3("s3://bucket?endpoint=http://localhost:9000/").endpoint.string == "http://localhost:9000")
        #expect(try s3("s3://bucket?endpoint=https%3A%2F%2Fs3.example.com").endpoint.string == "https://s3.example.com")
        let refused = ["http://host/path", "http://host:9000/bucket", "http://host?x=1", "http://user@host", "http://user:secret@host",
                       "ftp://host", "host:9000", "http://", "", "//host"]
        for endpoint in refused {
            let reason = refusal("s3://bucket?endpoint=\(endpoint)")
            #expect(reason?.hasPrefix("STORAGE_URL needs endpoint=http(s)://host[:port]") == true, "\(endpoint): \(reason ?? "accepted")")
        }
    }

    /// Every refusal names the variable and quotes the value, so the operator finds it.
    @Test func refusals_nameTheVariableAndQuoteTheValue() {
        for text in ["ftp://x", "file://x", "s3://x", "s3://bucket/..", "s3://bucket?x=1", "s3://bucket?endpoint=ftp://h"] {
            let reason = refusal(text)
            #expect(reason?.hasPrefix("STORAGE_URL ") == true && reason?.hasSuffix("\"\(text)\"") == true, "\(text): \(reason ?? "accepted")")
        }
    }
}
