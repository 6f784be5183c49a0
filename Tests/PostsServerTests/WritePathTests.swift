import Foundation
import Postgres
@testable import PostsServer
import Testing

/// The one write path (`Write`, `EventEffects.run`): how a statement is assembled, and a
/// scan of the sources that keeps every write going through it. What the writes do end to
/// end is each feature's own suite; `ChangeStormTests` holds the order under concurrency.
@Suite struct WritePathTests {
    static let sources = OneClockTests.sources.appendingPathComponent("PostsServer")

    private static func statement(_ write: Write) -> String {
        var sql = ""
        for part in write.head { sql += part.sql + "; " }
        return sql
    }

    /// Locks known up front come first, and the target waits for them (the gate).
    @Test func locksFirst_thenTheGatedTarget() {
        let write = Write(locking: .first(.posts([7])),
                          target: Write.Target(statement: "SELECT id FROM posts WHERE id = 7", tail: "FOR KEY SHARE"),
                          answer: "SELECT 1")
        let sql = Self.statement(write)
        let lock = sql.range(of: "lock AS (")
        let target = sql.range(of: "target AS (SELECT id FROM posts WHERE id = 7 AND (SELECT count(*) FROM lock) >= 0 FOR KEY SHARE)")
        #expect(lock != nil && target != nil, "\(sql)")
        if let lock, let target { #expect(lock.lowerBound < target.lowerBound) }
        #expect(sql.contains("pg_advisory_xact_lock($1)") && write.head[0].binds.count == 1, "\(sql)")
    }

    /// A comment's post: found by a read of its own, locked, then the target read under it.
    @Test func postOfALocatedRow_isLockedBeforeTheTarget() {
        let write = Write(locking: .postOf(located: "SELECT post_id FROM comments WHERE id = 1"),
                          target: Write.Target(statement: "DELETE FROM comments WHERE id = 1", tail: "RETURNING id"),
                          answer: "SELECT 1")
        let sql = Self.statement(write)
        let order = ["located AS (SELECT post_id FROM comments WHERE id = 1)", "lock AS (",
                     "target AS (DELETE FROM comments WHERE id = 1 AND (SELECT count(*) FROM lock) >= 0 RETURNING id)"]
        let positions = order.compactMap { sql.range(of: $0)?.lowerBound }
        #expect(positions.count == order.count && positions == positions.sorted(), "\(sql)")
    }

    /// Locks taken by an earlier statement: no lock CTE, and no gate to wait on.
    @Test func heldLocks_addNoGate() {
        let write = Write(locking: .held, target: Write.Target(statement: "SELECT 1 AS x WHERE true"), answer: "SELECT 1")
        #expect(Self.statement(write) == "target AS (SELECT 1 AS x WHERE true ); ")
    }

    /// `file:line` of each line under Sources/PostsServer outside `Writes/` that matches.
    private static func lines(matching pattern: String, outside folders: [String]) throws -> [String] {
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String }
            .filter { file in file.hasSuffix(".swift") && !folders.contains { file.hasPrefix($0) } } ?? []
        var found: [String] = []
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains(pattern) && !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                found.append("\(file):\(index + 1)")
            }
        }
        return found
    }

    /// No service takes advisory locks, records changes, assembles effects or builds a
    /// job's payload by hand: the write path does (`Writes/`), and payloads are `JobPayload`'s.
    @Test func everyWrite_goesThroughTheWritePath() throws {
        let rules: [(pattern: String, outside: [String], why: String)] = [
            // Sign-in's locks serialize one email's codes and one identity's first sign-in:
            // neither records a change, so neither is a write-path lock.
            ("pg_advisory_xact_lock", ["Writes/", "Auth/LoginCodes.swift", "OIDC/ProviderSignIn.swift"],
             "the locks of a write that records changes are WriteLocks' (Write.take, Write.Locking)"),
            ("INSERT INTO changes (", ["Writes/"], "changes are recorded by EventEffects"),
            ("FROM lock)", ["Writes/"], "the gate on the locks is Write's"),
            ("effects(of:", ["Writes/"], "a statement's effects are assembled by EventEffects.run"),
            ("json_build_object('", ["Writes/", "Jobs/"], "not a job's payload (JobPayload)"),
        ]
        #expect(try Self.lines(matching: "EventEffects", outside: []).count > 1, "the scan found no file: \(Self.sources.path)")
        for rule in rules {
            var found = try Self.lines(matching: rule.pattern, outside: rule.outside)
            // JSON built for answers and changes (not jobs) is the shapes' business.
            if rule.pattern.hasPrefix("json_build_object") {
                found = try found.filter { location in
                    let file = String(location.prefix { $0 != ":" })
                    let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
                    return text.contains("INSERT INTO jobs")
                }
            }
            #expect(found.isEmpty, "\(rule.why): \(found.joined(separator: ", "))")
        }
    }
}
