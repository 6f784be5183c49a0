import Foundation
import PostsClient
import Testing

/// The README's examples, line for line, so that they keep compiling against the API.
/// Not run: the first one's last loop follows events for as long as the app lives.
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

    /// The README's images example, line for line.
    static func readmeImagesExample(client: PostsClient, post: Post, photoData: Data) async throws {
        let aspectRatio = Double(post.imageWidth ?? 4) / Double(post.imageHeight ?? 3)
        let imageURL = client.imageURL(post.imageURL, width: ImageWidth(atLeast: 390 * 3))  // 390 points at 3×
        let profile = try await client.setAvatar(.jpeg(photoData))  // cropped square, at most 512 × 512
        _ = (aspectRatio, imageURL, profile)
    }

    /// The README's notifications example, line for line.
    static func readmeNotificationsExample(client: PostsClient, post: Post) async throws {
        try await client.follow(userID: post.userID)
        let badge = try await client.unreadNotificationCount()
        for try await notification in client.notifications() { print(notification.type, notification.actor.username) }
        try await client.markNotificationsRead()
        for try await notification in client.notificationEvents() { print("new:", notification.type, badge) }
    }

    /// The README's safety example, line for line.
    static func readmeSafetyExample(client: PostsClient, post: Post) async throws {
        try await client.report(.post(post.id), reason: .spam, details: "the same link in every post")
        try await client.block(userID: post.userID)  // from now on neither sees the other's posts
        if try await client.me().user.isModerator {
            for try await report in client.moderationReports() { print(report.reason, report.reportsOnTarget) }
        }
    }

    @Test func theExampleCompiles() {
        let example: (String) async throws -> Void = Self.readmeExample
        _ = example
        let images: (PostsClient, Post, Data) async throws -> Void = Self.readmeImagesExample
        _ = images
        let notifications: (PostsClient, Post) async throws -> Void = Self.readmeNotificationsExample
        _ = notifications
        let safety: (PostsClient, Post) async throws -> Void = Self.readmeSafetyExample
        _ = safety
    }
}
