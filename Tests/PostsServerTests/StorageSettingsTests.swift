import Testing
@testable import PostsServer

/// `STORAGE_URL` with its credentials and `S3_PUBLIC_URL`, as the environment gives them.
@Suite struct StorageSettingsTests {
    private static let bucket = "s3://posts?endpoint=http://127.0.0.1:8333"

    private func parse(_ url: String?, key: String? = "AK", secret: String? = "SK",
                       publicURL: String? = nil) throws(Configuration.Invalid) -> StorageSettings? {
        try StorageSettings.parse(url: url, accessKeyID: key, secretAccessKey: secret, publicURL: publicURL)
    }

    private func refusal(_ url: String?, key: String? = "AK", secret: String? = "SK", publicURL: String? = nil) -> String? {
        do {
            _ = try parse(url, key: key, secret: secret, publicURL: publicURL)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func noURL_keepsTheUploadFolder() throws {
        #expect(try parse(nil) == nil)
        #expect(try parse(nil, key: nil, secret: nil) == nil)
    }

    @Test func aFolder_needsNoCredentials() throws {
        let settings = try #require(try parse("file:///srv/uploads", key: nil, secret: nil))
        #expect(settings.location == .file(directory: "/srv/uploads"))
        #expect(settings.description == "file:///srv/uploads")
    }

    @Test func aBucket_needsBothCredentials() throws {
        let settings = try #require(try parse(Self.bucket))
        #expect(settings.location.isS3 && settings.accessKeyID == "AK" && settings.secretAccessKey == "SK")
        for (key, secret) in [(nil, "SK"), ("AK", nil), (nil, nil)] as [(String?, String?)] {
            #expect(refusal(Self.bucket, key: key, secret: secret)
                    == "S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required with an s3:// STORAGE_URL")
        }
    }

    /// What is logged of the settings never shows the secret.
    @Test func theDescription_showsNoSecret() throws {
        let settings = try #require(try parse(Self.bucket, key: "AKIDEXAMPLE", secret: "wJalrXUtnFEMI"))
        #expect(settings.description == "s3://posts/ at http://127.0.0.1:8333")
        #expect(!settings.description.contains("wJalrXUtnFEMI") && !settings.description.contains("AKIDEXAMPLE"))
    }

    @Test func aMalformedURL_isRefusedWithTheLocationsReason() {
        #expect(refusal("s3://Posts")?.hasPrefix("STORAGE_URL needs a bucket name") == true)
        #expect(refusal("uploads")?.hasPrefix("STORAGE_URL must start with file:// or s3://") == true)
    }

    @Test func aPublicURL_losesItsTrailingSlash() throws {
        #expect(try parse(Self.bucket, publicURL: "https://cdn.example.com/images/")?.publicURL == "https://cdn.example.com/images")
        #expect(try parse(Self.bucket, publicURL: "http://cdn.example.com")?.publicURL == "http://cdn.example.com")
        #expect(try parse(Self.bucket)?.publicURL == nil)
    }

    @Test func aPublicURL_needsABucket() {
        #expect(refusal(nil, publicURL: "https://cdn.example.com") == "S3_PUBLIC_URL needs an s3:// STORAGE_URL")
        #expect(refusal("file:///srv/uploads", publicURL: "https://cdn.example.com") == "S3_PUBLIC_URL needs an s3:// STORAGE_URL")
    }

    @Test func aPublicURL_isHTTPWithAHostAndNoQuery() {
        for publicURL in ["ftp://cdn.example.com", "cdn.example.com", "https://", "https://cdn.example.com/?v=1",
                          "https://cdn.example.com/#top", "javascript:alert(1)"] {
            #expect(refusal(Self.bucket, publicURL: publicURL) == "S3_PUBLIC_URL must be an http(s) URL with no query, not \"\(publicURL)\"",
                    "\(publicURL)")
        }
    }
}
