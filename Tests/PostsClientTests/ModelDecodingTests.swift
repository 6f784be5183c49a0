import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import PostsClient
import Testing
// Swift Testing has a `Comment` too; this file means the model.
import struct PostsClient.Comment

/// The models against JSON as the server writes it (compact, snake_case, milliseconds).
@Suite struct ModelDecodingTests {
    static let profile = #"{"user_id":3,"username":"ash","full_name":"Ash N","bio":"","avatar_url":null,"created_at":"2026-11-20T14:03:07.123Z"}"#
    static let post = #"{"id":12,"user_id":3,"parent_id":6,"title":"T","summary":"S","body":"B","image_url":"/uploads/9f86d081884c7d65.jpg","created_at":"2026-11-20T14:03:07.123Z","timezone":"Europe/Paris","location_tag":null,"ai_generated":false,"author_name":"ash","child_count":4,"like_count":17,"comment_count":2,"liked_by_me":true}"#

    static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try APIDateCoding.makeDecoder().decode(type, from: Data(json.utf8))
    }

    @Test func post_decodesEveryField_withMilliseconds() throws {
        let post = try Self.decode(Post.self, Self.post)
        #expect(post.id == 12 && post.userID == 3 && post.parentID == 6)
        #expect(post.imageURL == "/uploads/9f86d081884c7d65.jpg" && post.locationTag == nil)
        #expect(post.childCount == 4 && post.likeCount == 17 && post.commentCount == 2 && post.likedByMe == true)
        #expect(abs(post.createdAt.timeIntervalSince1970 - 1_795_183_387.123) < 0.0005)
        #expect(APIDateCoding.text(from: post.createdAt) == "2026-11-20T14:03:07.123Z")
    }

    @Test func post_withoutLikedByMe_asAnonymousAnswersAndChangesSendIt() throws {
        let anonymous = Self.post.replacingOccurrences(of: #","liked_by_me":true"#, with: "")
        #expect(try Self.decode(Post.self, anonymous).likedByMe == nil)
    }

    @Test func post_imageSize_presentNullOrAbsent() throws {
        let measured = Self.post.replacingOccurrences(of: #""image_url":"/uploads/9f86d081884c7d65.jpg","#,
                                                      with: #""image_url":"/uploads/9f86d081884c7d65.jpg","image_width":1080,"image_height":1350,"#)
        let post = try Self.decode(Post.self, measured)
        #expect(post.imageWidth == 1080 && post.imageHeight == 1350)
        let withoutImage = Self.post.replacingOccurrences(of: #""image_url":"/uploads/9f86d081884c7d65.jpg","#,
                                                          with: #""image_url":null,"image_width":null,"image_height":null,"#)
        #expect(try Self.decode(Post.self, withoutImage).imageWidth == nil)
        // A server from before image sizes leaves them out.
        let older = try Self.decode(Post.self, Self.post)
        #expect(older.imageWidth == nil && older.imageHeight == nil && older.imageURL != nil)
    }

    /// The firefly app's model (API.md, quoted exactly) still decodes a post that carries
    /// the newer members: it ignores what it does not know.
    @Test func fireflysPost_decodesAPostWithImageSizes() throws {
        struct FireflyPost: Codable { let id: Int; let userId: Int; let parentId: Int?; let title: String
          let summary: String; let body: String; let imageUrl: String?; let createdAt: String
          let timezone: String; let locationTag: String?; let aiGenerated: Bool
          let authorName: String?; let childCount: Int? }
        struct SinglePostResponse: Codable { let status: String; let post: FireflyPost }
        let post = Self.post.replacingOccurrences(of: #""image_url":"/uploads/9f86d081884c7d65.jpg","#,
                                                  with: #""image_url":"/uploads/9f86d081884c7d65.jpg","image_width":800,"image_height":600,"#)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let answer = try decoder.decode(SinglePostResponse.self, from: Data(#"{"status":"success","post":\#(post)}"#.utf8))
        #expect(answer.post.imageUrl == "/uploads/9f86d081884c7d65.jpg" && answer.post.childCount == 4)
    }

    @Test func comment_carriesItsAuthorsProfile() throws {
        let json = #"{"id":"7d0b2c9e-4f7c-4bd4-9a57-0d8b4c1e2f3a","post_id":12,"user_id":3,"body":"nice","created_at":"2026-11-20T14:05:00.000Z","profile":\#(Self.profile)}"#
        let comment = try Self.decode(Comment.self, json)
        #expect(comment.id == UUID(uuidString: "7D0B2C9E-4F7C-4BD4-9A57-0D8B4C1E2F3A"))
        #expect(comment.profile.username == "ash" && comment.profile.avatarURL == nil)
    }

    @Test func changes_ofEveryType() throws {
        let created = try Self.decode(Change.self, #"{"seq":"AAAB","type":"post.created","at":"2026-11-20T14:05:00.000Z","post_id":12,"parent_id":6,"user_id":3,"post":\#(Self.post),"parent_child_count":5}"#)
        #expect(created.type == .postCreated && created.post?.id == 12 && created.parentChildCount == 5)
        let deleted = try Self.decode(Change.self, #"{"seq":"AAAC","type":"post.deleted","at":"2026-11-20T14:05:00.000Z","post_id":12,"parent_id":null,"user_id":3,"deleted_ids":[12,13]}"#)
        #expect(deleted.deletedIDs == [12, 13] && deleted.parentID == nil && deleted.parentChildCount == nil)
        let liked = try Self.decode(Change.self, #"{"seq":"AAAD","type":"like.changed","at":"2026-11-20T14:05:00.000Z","post_id":12,"parent_id":6,"user_id":3,"liked":true,"like_count":18}"#)
        #expect(liked.liked == true && liked.likeCount == 18)
        let uncommented = try Self.decode(Change.self, #"{"seq":"AAAE","type":"comment.deleted","at":"2026-11-20T14:05:00.000Z","post_id":12,"parent_id":6,"user_id":3,"comment_id":"7d0b2c9e-4f7c-4bd4-9a57-0d8b4c1e2f3a","comment_count":1}"#)
        #expect(uncommented.commentID != nil && uncommented.commentCount == 1)
        let profile = try Self.decode(Change.self, #"{"seq":"AAAF","type":"profile.updated","at":"2026-11-20T14:05:00.000Z","user_id":3,"profile":\#(Self.profile)}"#)
        #expect(profile.postID == nil && profile.profile?.fullName == "Ash N")
        // A type this client does not know yet still decodes.
        let future = try Self.decode(Change.self, #"{"seq":"AAAG","type":"poll.closed","at":"2026-11-20T14:05:00.000Z","user_id":3}"#)
        #expect(future.type.rawValue == "poll.closed")
    }

    @Test func timesWithoutFraction_areAcceptedToo() throws {
        #expect(APIDateCoding.date(from: "2026-11-20T14:03:07Z") == Date(timeIntervalSince1970: 1_795_183_387))
        #expect(APIDateCoding.date(from: "yesterday") == nil)
    }

    @Test func errorEnvelope_becomesPostsAPIError_withRetryAfterAndRequestID() throws {
        let url = URL(string: "http://127.0.0.1/api/x")!
        let response = try #require(HTTPURLResponse(url: url, statusCode: 503, httpVersion: "HTTP/1.1",
                                                    headerFields: ["Retry-After": "2", "X-Request-Id": "r-1"]))
        let error = PostsAPIError(response: response, body: Data(#"{"status":"error","error":"unavailable","message":"database unreachable"}"#.utf8))
        #expect(error == PostsAPIError(status: 503, code: .unavailable, message: "database unreachable",
                                       retryAfter: .seconds(2), requestID: "r-1"))
        // A body that is not the envelope (a proxy's page) keeps the status.
        let proxy = PostsAPIError(response: try #require(HTTPURLResponse(url: url, statusCode: 502, httpVersion: nil, headerFields: [:])),
                                  body: Data("<html>Bad Gateway</html>".utf8))
        #expect(proxy.status == 502 && proxy.code.rawValue == "http_502" && proxy.message.contains("Bad Gateway"))
    }

    @Test func mailboxMessage_findsTheCode() {
        let message = MailboxMessage(to: "a@b.c", subject: "Your code", body: "Your sign-in code is 042917. It works for 10 minutes.",
                                     createdAt: Date())
        #expect(message.loginCode == "042917")
    }
}
