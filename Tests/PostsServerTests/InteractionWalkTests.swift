import Foundation
@testable import PostsServer
import Testing
import TestSupport

/// Walks every interaction of the visibility policy × every reason, end to end: the viewer
/// acts on the author's thing before the reason (allowed), and after it gets exactly what
/// `Visibility.refusal(by:of:)` says (allowed, 403 or 404); taking back what was given
/// (an unlike, an unfollow) is never refused by a block. The probes switch over
/// `Visibility.Interaction` exhaustively: an interaction added to the policy without a
/// probe here does not compile.
@Suite struct InteractionWalkTests {
    typealias Reason = VisibilityWalkTests.Reason
    typealias Scene = VisibilityWalkTests.Scene

    /// An act of the viewer's on the author's thing: `give` gives something (a like, a
    /// comment, a follow); `takeBack`, if the act has one, takes it back.
    struct Probe {
        let give: () throws -> RawHTTPClient.Response
        var takeBack: (() throws -> RawHTTPClient.Response)?
    }

    @Test(arguments: Reason.allCases)
    func everyInteraction_isRefusedExactlyAsThePolicySays(_ reason: Reason) throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let moderator = try APIClient.moderator("mod-\(reason.rawValue)@example.com", on: app)
        for interaction in Visibility.Interaction.allCases {
            let scene = try Scene(app, "\(reason.rawValue)-\(interaction.rawValue)", moderator: moderator)
            let probe = try Self.probe(interaction, in: scene)
            let before = try probe.give()
            #expect((200..<300).contains(before.status), "\(interaction) before any \(reason): \(before.text)")
            try scene.apply(reason)
            let refusal = Visibility.refusal(by: reason.policy, of: interaction)
            let after = try probe.give()
            switch refusal {
            case nil: #expect((200..<300).contains(after.status), "\(interaction) after \(reason) is allowed: \(after.text)")
            case .forbidden?: #expect(after.status == 403 && after.json["error"] as? String == "forbidden",
                                      "\(interaction) after \(reason): \(after.status) \(after.text)")
            case .notFound?: #expect(after.status == 404 && after.json["error"] as? String == "not_found",
                                     "\(interaction) after \(reason): \(after.status) \(after.text)")
            default: Issue.record("\(interaction): a refusal the walk does not know")
            }
            if let takeBack = probe.takeBack, refusal == .forbidden {
                #expect(try takeBack().status == 200, "\(interaction): taken back across a \(reason)")
            }
        }
    }

    /// The act of each interaction, on a thing of the author's made now.
    static func probe(_ interaction: Visibility.Interaction, in scene: Scene) throws -> Probe {
        let (viewer, author) = (scene.viewer, scene.author)
        switch interaction {
        case .like:
            let post = try author.createPost("by the author").id
            return Probe(give: { try viewer.send("PUT", "/api/posts/\(post)/like") },
                         takeBack: { try viewer.send("DELETE", "/api/posts/\(post)/like") })
        case .commentLike:
            let post = try scene.third.createPost("by the third").id
            let comment = try #require(try ThreadTests.comment(author, on: post, "by the author")["id"] as? String)
            return Probe(give: { try viewer.send("PUT", "/api/comments/\(comment)/like") },
                         takeBack: { try viewer.send("DELETE", "/api/comments/\(comment)/like") })
        case .comment:
            let post = try author.createPost("by the author").id
            return Probe(give: { try viewer.send("POST", "/api/posts/\(post)/comments", json: ["body": "hello"]) })
        case .reply:
            let post = try scene.third.createPost("by the third").id
            let comment = try #require(try ThreadTests.comment(author, on: post, "by the author")["id"] as? String)
            return Probe(give: { try viewer.send("POST", "/api/posts/\(post)/comments", json: ["body": "hi", "reply_to": comment]) })
        case .childPost:
            let post = try author.createPost("by the author").id
            return Probe(give: {
                try viewer.send("POST", "/api/posts", json: ["title": "under", "summary": "s", "body": "b", "parent_id": post])
            })
        case .reparent:
            let post = try author.createPost("by the author").id
            let mine = try viewer.createPost("mine").id
            return Probe(give: { try viewer.send("POST", "/api/posts/reparent", json: ["post_id": mine, "parent_id": post]) })
        case .follow:
            let user = scene.authorID
            return Probe(give: { try viewer.send("PUT", "/api/users/\(user)/follow") },
                         takeBack: { try viewer.send("DELETE", "/api/users/\(user)/follow") })
        }
    }
}
