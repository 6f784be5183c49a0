import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import PostsClient
import Testing

/// The safety and moderation models against JSON as the server writes it, and what a
/// newer or older server may send instead.
@Suite struct SafetyModelDecodingTests {
    private static let profile = ModelDecodingTests.profile
    private static let time = "2026-11-20T14:05:00.000Z"
    private static let commentID = "7d0b2c9e-4f7c-4bd4-9a57-0d8b4c1e2f3a"

    private static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try ModelDecodingTests.decode(type, json)
    }

    private static func queued(target: String, reason: String = "spam") -> String {
        #"{"id":7,"status":"open","reason":"\#(reason)","details":"ads","created_at":"\#(time)","reporter":\#(profile),"target":\#(target),"reports_on_target":2}"#
    }

    @Test func moderationReport_ofEachKindOfTarget() throws {
        let post = try Self.decode(ModerationReport.self, Self.queued(target: #"{"type":"post","post":\#(ModelDecodingTests.post)}"#))
        #expect(post.id == 7 && post.status == .open && post.reason == .spam && post.details == "ads")
        #expect(post.reporter.username == "ash" && post.reportsOnTarget == 2)
        guard case .post(let reported?)? = post.target else { Issue.record("not a post: \(String(describing: post.target))"); return }
        #expect(reported.id == 12 && reported.title == "T")

        let comment = #"{"id":"\#(Self.commentID)","post_id":12,"user_id":3,"body":"rude","created_at":"\#(Self.time)","profile":\#(Self.profile)}"#
        let onComment = try Self.decode(ModerationReport.self, Self.queued(target: #"{"type":"comment","comment":\#(comment)}"#))
        #expect(onComment.target == .comment(try Self.decode(Comment.self, comment)))
        let onUser = try Self.decode(ModerationReport.self, Self.queued(target: #"{"type":"user","profile":\#(Self.profile)}"#))
        #expect(onUser.target == .user(try Self.decode(Profile.self, Self.profile)))
    }

    @Test func moderationReport_whoseTargetIsGone_orUnknown_stillDecodes() throws {
        #expect(try Self.decode(ModerationReport.self, Self.queued(target: #"{"type":"post","post":null}"#)).target == .post(nil))
        #expect(try Self.decode(ModerationReport.self, Self.queued(target: #"{"type":"comment","comment":null}"#)).target == .comment(nil))
        // The id stays with a gone target: which post it was.
        let gone = try Self.decode(ModerationReport.self, Self.queued(target: #"{"type":"post","id":12,"post":null}"#))
        #expect(gone.target == .post(nil) && gone.targetReference == .post(12))
        // A newer server's kind of target or reason leaves the rest of the report readable.
        let future = try Self.decode(ModerationReport.self, Self.queued(target: #"{"type":"poll","poll":{"id":1}}"#, reason: "scam"))
        #expect(future.target == nil && future.reason.rawValue == "scam" && future.id == 7)
    }

    @Test func logEntries_withEachKindOfTarget_andWithoutAModerator() throws {
        func entry(_ target: String, moderator: String = Self.profile, report: String = "7") -> String {
            #"{"id":3,"action":"remove","moderator":\#(moderator),"target":\#(target),"report_id":\#(report),"note":"ads","created_at":"\#(Self.time)"}"#
        }
        let removed = try Self.decode(ModerationLogEntry.self, entry(#"{"type":"post","id":12}"#))
        #expect(removed.action == .remove && removed.target == .post(12) && removed.reportID == 7 && removed.note == "ads")
        #expect(removed.moderator?.username == "ash")
        let comment = try Self.decode(ModerationLogEntry.self, entry(#"{"type":"comment","id":"\#(Self.commentID)"}"#))
        #expect(comment.target == .comment(try #require(UUID(uuidString: Self.commentID))))
        let suspended = try Self.decode(ModerationLogEntry.self, entry(#"{"type":"user","id":5}"#, moderator: "null", report: "null"))
        #expect(suspended.target == .user(5) && suspended.moderator == nil && suspended.reportID == nil)
        let future = try Self.decode(ModerationLogEntry.self, entry(#"{"type":"poll","id":"p1"}"#))
        #expect(future.target == nil && future.id == 3)
    }

    @Test func reportTarget_roundTrips_andNamesOneFieldOfTheRequest() throws {
        let uuid = try #require(UUID(uuidString: Self.commentID))
        for target in [ReportTarget.post(12), .comment(uuid), .user(5)] {
            #expect(try Self.decode(ReportTarget.self, String(decoding: try JSONEncoder().encode(target), as: UTF8.self)) == target)
        }
        #expect(ReportTarget.comment(uuid).field == ("comment_id", .string(Self.commentID)))
        #expect(ReportTarget.user(5).field == ("user_id", .int(5)))
    }

    @Test func me_withRoleAndSuspension_andFromAServerBeforeThem() throws {
        let moderator = try Self.decode(Me.self, #"{"status":"success","user":{"id":3,"email":"a@b.c","role":"moderator","suspended":false},"profile":\#(Self.profile)}"#)
        #expect(moderator.user.role == .moderator && moderator.user.isModerator && !moderator.user.isSuspended)
        let older = try Self.decode(Me.self, #"{"status":"success","user":{"id":3,"email":"a@b.c"},"profile":\#(Self.profile)}"#)
        #expect(older.user.role == nil && !older.user.isModerator && older.user.suspended == nil)
    }

    @Test func theSmallAnswers() throws {
        let report = try Self.decode(ReportEnvelope.self, #"{"status":"success","report":{"id":4,"status":"open","created_at":"\#(Self.time)"}}"#).report
        #expect(report.id == 4 && report.status == .open)
        #expect(try Self.decode(BlockState.self, #"{"status":"success","user_id":5,"blocked":true}"#) == BlockState(userID: 5, blocked: true))
        #expect(try Self.decode(MuteState.self, #"{"status":"success","user_id":5,"muted":false}"#) == MuteState(userID: 5, muted: false))
        #expect(try Self.decode(SuspensionState.self, #"{"status":"success","user_id":5,"suspended":true}"#) == SuspensionState(userID: 5, suspended: true))
    }

    @Test func forbiddenAnswers_tellTheirRefusalApart() throws {
        func error(_ status: Int, _ code: String, _ message: String) throws -> PostsAPIError {
            let response = try #require(HTTPURLResponse(url: URL(string: "http://127.0.0.1/x")!, statusCode: status, httpVersion: nil, headerFields: [:]))
            return PostsAPIError(response: response, body: Data(#"{"status":"error","error":"\#(code)","message":"\#(message)"}"#.utf8))
        }
        #expect(try error(403, "forbidden", "this account is suspended").refusal == .accountSuspended)
        #expect(try error(403, "forbidden", "you cannot interact with this user's content: one of you blocked the other").refusal == .blocked)
        #expect(try error(403, "forbidden", "moderators only").refusal == .moderatorsOnly)
        #expect(try error(403, "forbidden", "only the post's author may change it").refusal == nil)
        // The word filter's refusal mentions "blocked" too, but is a 422.
        #expect(try error(422, "validation_failed", "contains a blocked word").refusal == nil)
    }
}
