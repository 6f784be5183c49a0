import Foundation
import PostsClient
import Testing

/// The README's example, line for line, so that it keeps compiling against the API.
/// Not run: its last loop follows events for as long as the app lives.
@Suite struct ReadmeExampleTests {
    static func readmeExample(codeFromTheEmail: String) async throws {
        let client = PostsClient(baseURL: URL(string: "https://posts.example.com")!)
        try await client.sendCode(to: "ash@example.com")
        try await client.verifyCode(codeFromTheEmail, email: "ash@example.com")
        let post = try await client.createPost(NewPost(title: "Hello", summary: "A first post", body: "Hi all"))
        for try await child in client.children(of: post.id) { print(child.title) }
        for try await change in client.events(filter: .post(post.id)) {
            print(change.type, change.post?.title ?? "")
        }
    }

    @Test func theExampleCompiles() {
        let example: (String) async throws -> Void = Self.readmeExample
        _ = example
    }
}
