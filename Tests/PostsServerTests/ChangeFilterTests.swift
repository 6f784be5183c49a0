import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// `ChangeFilter`'s SQL (a union of index walks, one per branch) selects exactly what its
/// in-memory rule does, each change once, in key order, across pages.
@Suite struct ChangeFilterTests {
    /// Every combination of the columns the filters look at, as stored changes.
    private static func seed(_ pool: ConnectionPool) throws -> Int {
        try pool.withConnection { connection in
            try connection.query("""
                INSERT INTO changes (type, post_id, parent_id, old_parent_id, reparented, user_id, data)
                SELECT CASE WHEN post_id IS NULL THEN 'profile.updated' ELSE 'post.updated' END,
                       post_id, parent_id, old.old_parent_id, old.reparented, user_id, '{}'
                FROM unnest(ARRAY[NULL, 1, 2, 3]::bigint[]) AS post_id,
                     unnest(ARRAY[NULL, 1, 2]::bigint[]) AS parent_id,
                     (VALUES (NULL::bigint, false), (NULL, true), (1, true), (2, true)) AS old (old_parent_id, reparented),
                     unnest(ARRAY[7, 8]::bigint[]) AS user_id
                ORDER BY random()
                """).affectedRows
        }
    }

    private static var filters: [ChangeFilter] {
        var filters: [ChangeFilter] = []
        for postID in [nil, 1, 2] as [Int64?] {
            for parent in [nil, .post(1), .post(2), .root] as [ChangeFilter.Parent?] {
                for userID in [nil, 7] as [Int64?] {
                    var filter = ChangeFilter()
                    filter.postID = postID
                    filter.parent = parent
                    filter.userID = userID
                    filters.append(filter)
                }
            }
        }
        return filters
    }

    /// Every page of `filter` after the start, walked with a small limit.
    private static func walk(_ filter: ChangeFilter, on connection: PostgresConnection) throws -> [Change] {
        var cursor = ChangeKey(txid: 0, position: 0)
        var seen: [Change] = []
        while true {
            let page = try ChangeReader.page(after: cursor, through: nil, filter: filter, limit: 5, on: connection)
            seen += page.changes
            cursor = page.next
            if !page.hasMore { return seen }
        }
    }

    @Test func branches_selectExactlyTheMatches_onceEach_inKeyOrder() throws {
        let pool = ConnectionPool(ConnectionPool.Configuration(conninfo: try TestDatabase.makeDatabase(), size: 1))
        let count = try Self.seed(pool)
        #expect(count == 96)
        try pool.withConnection { connection in
            // The horizon is the cluster's: another test's open transaction may hold it
            // below the seed for a moment.
            var all: [Change] = []
            _ = try eventually(timeout: .seconds(20)) {
                all = try Self.walk(ChangeFilter(), on: connection)
                return all.count >= count
            }
            try #require(all.count == count)
            #expect(all.map(\.key) == all.map(\.key).sorted())
            for filter in Self.filters {
                let expected = all.filter(filter.matches).map(\.key)
                #expect(try Self.walk(filter, on: connection).map(\.key) == expected, "\(filter)")
            }
        }
    }

    /// The driving criterion is split into disjoint alternatives, one index each; the other
    /// criteria are checked on its rows.
    @Test func branches_oneIndexEach() {
        var filter = ChangeFilter()
        #expect(filter.branches.map(\.sql) == [Visibility.notSuspended("c.user_id").sql + " AND c.recipient_id IS NULL"],
                "only suspended authors and notifications left out")
        // A user's notifications: its own private changes drive (notifications only: the
        // partial index's predicate), and nothing public comes.
        var mine = ChangeFilter()
        mine.audience = .recipient(5)
        #expect(mine.branches.map(\.sql) == [" AND (c.recipient_id = $1 AND c.type = 'notification')"
                                              + Visibility.notSuspended("c.user_id").sql])
        #expect(ChangeFilter.everything.branches.map(\.sql) == [Visibility.notSuspended("c.user_id").sql])
        filter.userID = 7
        #expect(filter.branches.count == 1)
        filter.parent = .root
        #expect(filter.branches.count == 1, "the user drives; roots are checked")
        filter.postID = 3
        #expect(filter.branches.count == 2)
        #expect(filter.branches.allSatisfy { $0.sql.hasPrefix(" AND (c.post_id = $1)") || $0.sql.contains("c.parent_id = $1") })
    }
}
