import Foundation

/// The moderators' calls (API.md "Safety"): the report queue, resolving reports, suspending
/// users, and the log of every action. Open to accounts whose role is moderator or admin
/// (`Me.User.isModerator`); anyone else gets `forbidden` with `refusal == .moderatorsOnly`.
/// A `note` (at most 1,000 characters) goes into the log beside the action.
///
/// Not retried after a lost answer: each action writes a log entry, and resolving a report
/// twice is `conflict`.
extension PostsClient {
    /// Reports by status, oldest first: open ones to work through, or resolved ones.
    public func moderationReports(status: ReportStatus = .open, pageSize: Int = 50) -> PageSequence<ModerationReport> {
        pages(of: ModerationReportsEnvelope.self, "/api/moderation/reports", query: [("status", status.rawValue)],
              pageSize: pageSize) {
            Page(items: $0.reports, nextCursor: $0.nextCursor)
        }
    }

    /// Resolves a report, and with it every open report on the same target. An unknown
    /// report is `notFound`, one already resolved `conflict`, `remove` on a user
    /// `validationFailed`, and `suspend` of content that is gone `notFound`.
    public func resolveReport(id: Int, action: ReportResolution, note: String? = nil) async throws {
        let request = try APIRequest.json("POST", "/api/moderation/reports/\(id)/resolve",
                                          [("action", .string(action.rawValue))] + Self.noteField(note))
        _ = try await send(request, as: SuccessEnvelope.self)
    }

    /// Suspends a user: its sessions end at once, it cannot sign in (`refusal ==
    /// .accountSuspended`), and its posts and comments disappear from every read until
    /// `unsuspend`. An unknown user is `notFound`.
    @discardableResult
    public func suspend(userID: Int, note: String? = nil) async throws -> SuspensionState {
        try await send(APIRequest.json("POST", "/api/moderation/users/\(userID)/suspend", Self.noteField(note)))
    }

    /// Lifts a suspension: the user may sign in again and its content comes back unchanged.
    @discardableResult
    public func unsuspend(userID: Int, note: String? = nil) async throws -> SuspensionState {
        try await send(APIRequest.json("POST", "/api/moderation/users/\(userID)/unsuspend", Self.noteField(note)))
    }

    /// Every moderator action, newest first.
    public func moderationLog(pageSize: Int = 50) -> PageSequence<ModerationLogEntry> {
        pages(of: ModerationLogEnvelope.self, "/api/moderation/log", pageSize: pageSize) {
            Page(items: $0.entries, nextCursor: $0.nextCursor)
        }
    }

    private static func noteField(_ note: String?) -> [(String, JSONValue)] {
        note.map { [("note", .string($0))] } ?? []
    }
}
