import PostsClient
import Foundation
import Testing

@Suite struct PostsClientTests {
    @Test func client_keepsItsBaseURL() throws {
        let client = PostsClient(baseURL: try #require(URL(string: "http://127.0.0.1:1")))
        #expect(client.baseURL.port == 1)
    }
}
