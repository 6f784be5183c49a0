import Testing
@testable import PostsServer

/// The URLs of S3 requests: what libcurl sends and signs, so the query is already in
/// SigV4's canonical form (sorted by name, RFC 3986 encoded).
@Suite struct S3RequestTests {
    private func location(_ text: String) throws -> S3Location {
        guard case .s3(let location) = try StorageLocation(parsing: text) else { throw StorageLocation.Invalid(description: "not s3") }
        return location
    }

    @Test func pathStyle_putsTheBucketInThePath() throws {
        let seaweed = try location("s3://posts?endpoint=http://127.0.0.1:8333")
        #expect(S3Request(seaweed, key: "a/b.jpg").url == "http://127.0.0.1:8333/posts/a/b.jpg")
        #expect(S3Request(seaweed, key: nil).url == "http://127.0.0.1:8333/posts")
        #expect(S3Request(seaweed, key: nil, query: [("list-type", "2")]).url == "http://127.0.0.1:8333/posts?list-type=2")
    }

    @Test func virtualHostStyle_putsTheBucketInTheHost() throws {
        let aws = try location("s3://posts/uploads?region=eu-west-1")
        #expect(S3Request(aws, key: "uploads/a.jpg").url == "https://posts.s3.eu-west-1.amazonaws.com/uploads/a.jpg")
        #expect(S3Request(aws, key: nil).url == "https://posts.s3.eu-west-1.amazonaws.com/")
        let custom = try location("s3://posts?endpoint=https://storage.example.com:8443&path_style=false")
        #expect(S3Request(custom, key: "a.jpg").url == "https://posts.storage.example.com:8443/a.jpg")
    }

    @Test func keys_areEncoded_keepingTheirSlashes() throws {
        let seaweed = try location("s3://posts?endpoint=http://h:1")
        #expect(S3Request(seaweed, key: "a b/c+d=e&f~g_h-i.j/ü").url == "http://h:1/posts/a%20b/c%2Bd%3De%26f~g_h-i.j/%C3%BC")
    }

    @Test func theQuery_isSortedByName_andRFC3986Encoded() throws {
        let seaweed = try location("s3://posts?endpoint=http://h:1")
        let url = S3Request(seaweed, key: nil, query: [("prefix", "a/b"), ("list-type", "2"), ("continuation-token", "x y")]).url
        #expect(url == "http://h:1/posts?continuation-token=x%20y&list-type=2&prefix=a%2Fb")
        #expect(S3Request(seaweed, key: nil, query: [("prefix", "")]).url == "http://h:1/posts?prefix=")
    }

    /// Tokens are often base64: `+`, `/` and `=` must reach the store as they were sent
    /// back, and be signed in the same encoding.
    @Test func continuationTokens_keepTheirBase64Characters() throws {
        let seaweed = try location("s3://posts?endpoint=http://h:1")
        let url = S3Request(seaweed, key: nil, query: [("continuation-token", "1Ab+c/D=="), ("list-type", "2")]).url
        #expect(url == "http://h:1/posts?continuation-token=1Ab%2Bc%2FD%3D%3D&list-type=2")
    }

    @Test func encode_leavesOnlyUnreservedCharacters() {
        #expect(S3Request.encode("AZaz09-_.~", keepingSlashes: false) == "AZaz09-_.~")
        #expect(S3Request.encode("a/b", keepingSlashes: false) == "a%2Fb")
        #expect(S3Request.encode("a/b", keepingSlashes: true) == "a/b")
        #expect(S3Request.encode("%\n*", keepingSlashes: true) == "%25%0A%2A")
    }
}
