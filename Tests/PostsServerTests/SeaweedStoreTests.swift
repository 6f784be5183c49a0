import Foundation
import Postgres
import Testing
import TestSupport

/// The S3-compatible store of the storage tests (Tests/TestSupport/SeaweedStore.swift):
/// it starts with its bucket, takes requests signed with its credentials, lists what it
/// holds, and can be stopped and started again on the same ports with its data.
@Suite struct SeaweedStoreTests {
    @Test func theSharedStore_listsWhatItHolds_throughFolders() throws {
        let store = try SeaweedStore.shared
        let prefix = SeaweedStore.makePrefix()
        let objects = ["\(prefix)/a.jpg", "\(prefix)/b c.png", "\(prefix)/sizes/640/a.jpg", "\(prefix)/sizes/320/a.jpg",
                       "\(prefix)/sizes/320/b c.png"]
        for (index, key) in objects.enumerated() { try store.put(Array("object \(index)".utf8), at: key) }

        #expect(try store.keys(under: prefix) == objects.sorted())
        // Page by page: two entries a request.
        #expect(try store.keys(under: prefix, pageSize: 2) == objects.sorted())
        #expect(try store.keys(under: prefix + "/sizes/320") == ["\(prefix)/sizes/320/a.jpg", "\(prefix)/sizes/320/b c.png"])
        #expect(try store.keys(under: SeaweedStore.makePrefix()) == [])
        #expect(try store.contents(of: "\(prefix)/b c.png") == Array("object 1".utf8))
        #expect(try store.contents(of: "\(prefix)/missing.jpg") == nil)
    }

    @Test func theServersEnvironment_namesTheStoreAndItsCredentials() throws {
        let store = try SeaweedStore.shared
        let environment = store.environment(prefix: "uploads")
        #expect(environment["STORAGE_URL"] == "s3://\(store.bucket)/uploads?endpoint=\(store.endpoint)&region=us-east-1&path_style=true")
        #expect(environment["S3_ACCESS_KEY_ID"] == store.accessKey)
        #expect(environment["S3_SECRET_ACCESS_KEY"] == store.secretKey)
        #expect(store.storageURL() == "s3://\(store.bucket)?endpoint=\(store.endpoint)&region=us-east-1&path_style=true")
        #expect(store.endpoint.hasPrefix("http://127.0.0.1:"))
    }

    /// curl signs with AWS Signature V4, as the server's client will: the generated
    /// credentials are the store's, and nothing unsigned gets in.
    @Test func s3_takesSignedRequests_andRefusesUnsignedOnes() throws {
        let store = try SeaweedStore.shared
        let prefix = SeaweedStore.makePrefix()
        let file = NSTemporaryDirectory() + "posts-seaweed-body-\(getpid())-\(prefix)"
        try Data("signed body".utf8).write(to: URL(fileURLWithPath: file))
        defer { unlink(file) }
        let signed = try curl(["--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "\(store.accessKey):\(store.secretKey)",
                               "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD",
                               "-T", file, "\(store.endpoint)/\(store.bucket)/\(prefix)/signed.jpg"])
        #expect(signed == "200")
        let unsigned = try curl(["-T", file, "\(store.endpoint)/\(store.bucket)/\(prefix)/unsigned.jpg"])
        #expect(unsigned == "403")
        let wrongSecret = try curl(["--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "\(store.accessKey):wrong",
                                    "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD",
                                    "-T", file, "\(store.endpoint)/\(store.bucket)/\(prefix)/wrong.jpg"])
        #expect(wrongSecret == "403")
        #expect(try store.keys(under: prefix) == ["\(prefix)/signed.jpg"])
        #expect(try store.contents(of: "\(prefix)/signed.jpg") == Array("signed body".utf8))
    }

    @Test func aStoppedStore_refuses_andStartsAgainWithItsData() throws {
        let store = try SeaweedStore()
        let shared = try SeaweedStore.shared
        #expect(store.endpoint != shared.endpoint)
        try store.put(Array("kept".utf8), at: "outage/kept.jpg")
        let endpoint = store.endpoint
        let port = try #require(Int(endpoint.split(separator: ":").last ?? ""))

        store.stop()
        #expect(throws: (any Error).self) { try RawHTTPClient(port: port) }
        #expect(throws: (any Error).self) { try RawHTTPClient(port: store.filerPort) }

        try store.start()
        #expect(store.endpoint == endpoint)
        #expect(try store.keys(under: "outage") == ["outage/kept.jpg"])
        #expect(try store.contents(of: "outage/kept.jpg") == Array("kept".utf8))
    }

    /// The HTTP status curl got, or its error.
    private func curl(_ arguments: [String]) throws -> String {
        let outcome = try ChildProcess.run("/usr/bin/env", ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}"] + arguments)
        return outcome.status == 0 ? outcome.output : "curl failed (\(outcome.status)): \(outcome.output)"
    }
}
