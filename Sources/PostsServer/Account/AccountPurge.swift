import Postgres

/// The end of an account's deletion when it has more follow partners than one transaction
/// should lock (`WriteLocks.maxProfiles`): API.md "Feeds at any scale" wants the deletion of
/// an account with a million followers to cost what anyone's does, and no statement whose
/// cost or lock count grows with a follower count.
///
/// `DELETE /api/me` then does in its transaction what does not depend on the audience (the
/// account's posts, likes and comments, as for anyone), and `begin` signs the account out
/// everywhere, frees its email, deletes its profile (`profile.deleted`: from the `200` on
/// nothing of the account is readable, its profile and its follow pages are 404, and it is
/// in no list, since every one of them joins the profile) and queues an `account.purge`
/// job. The job removes its follows `partnersPerBatch` partners a transaction, each batch
/// with its partners' profile locks and their `follow.changed` events and counters, as an
/// unfollow does; then, holding the account's own lock and finding no follow left, deletes
/// the user row. Until then (the seconds the job takes) the partners' counters still
/// count it.
final class AccountPurge: JobHandler {
    /// One batch's partners: each one lock, under the cap that would lock every profile.
    static let partnersPerBatch = WriteLocks.maxProfiles - 1

    private let effects: EventEffects

    init(effects: EventEffects) {
        self.effects = effects
    }

    /// The purge kind's place in the job runner. (Its effects queue no job: removing follows
    /// and a profile notifies no one.)
    static func worker(effects: EventEffects) -> JobWorker {
        JobWorker(kind: .accountPurge, makeHandler: { _ in AccountPurge(effects: effects) })
    }

    /// In the deletion's transaction, after the account's content went: the account signed
    /// out, its email, codes, mail and devices gone, its profile deleted (`profile.deleted`);
    /// the purge queued. Returns the avatar to drop.
    static func begin(_ userID: Int64, effects: EventEffects, clock: ServerClock, on connection: PostgresConnection) throws -> String? {
        let row = try effects.run(Write(
            locking: .held,
            steps: ["""
            old AS (SELECT email FROM users WHERE id = \(userID)),
            renamed AS (
                UPDATE users SET email = 'deleted-' || id || '@purging.invalid', suspended_at = coalesce(suspended_at, \(clock.now))
                WHERE id = \(userID)
            ), profile AS (DELETE FROM profiles WHERE user_id = \(userID) RETURNING user_id, avatar_url),
            signed_out AS (DELETE FROM tokens WHERE user_id = \(userID)),
            devices AS (DELETE FROM push_tokens WHERE user_id = \(userID)),
            codes AS (DELETE FROM login_codes WHERE email = (SELECT email FROM old)),
            mail AS (DELETE FROM outbox WHERE recipient = (SELECT email FROM old)),
            queued AS (
                INSERT INTO jobs (kind, payload, run_at, created_at)
                VALUES (\(JobKind.accountPurge.name), \(JobPayload.accountPurge(user: "\(userID)")), \(effects.clock.now), \(effects.clock.now))
            )
            """],
            events: [(.profileDeleted, EventTable.profileDeleted.cte(["seq": "1", "user_id": "profile.user_id"], "FROM profile"))],
            answer: """
            SELECT (SELECT avatar_url FROM profile) AS avatar_url
            """, queuesJobs: true), on: connection).firstRow()
        return try row.decode("avatar_url")
    }

    func perform(_ jobs: [ClaimedJob], context: JobContext) throws -> [JobOutcome] {
        context.tryEach(jobs) { try purge($0, context: context) }
    }

    private func purge(_ job: ClaimedJob, context: JobContext) throws -> JobOutcome {
        let userID = try context.pool.withConnection { connection in
            try connection.query("SELECT \(JobPayload.member(.userID, of: "payload", as: "bigint")) AS user_id FROM jobs WHERE id = \(job.id)")
                .first?.decode("user_id", as: Int64?.self)
        }
        guard let userID else { return .skipped }
        while true {
            // Between batches only: each committed batch is done for good.
            guard context.isRunning() else { return .untried }
            if try context.pool.withTransaction({ try step(userID, on: $0) }) { return .done }
        }
    }

    /// One batch of the account's follows, or, with none left, the account itself; true
    /// when the account is gone.
    private func step(_ userID: Int64, on connection: PostgresConnection) throws -> Bool {
        let partners = try AccountDeletion.followPartners(of: userID, limit: Self.partnersPerBatch, on: connection)
        try Write.take(.profiles([userID] + partners), on: connection)
        if partners.isEmpty {
            // Under its lock no follow of it can begin; one made before the lock is found
            // by this statement's snapshot, and waits for the next round.
            let left = try connection.query("""
                SELECT EXISTS (SELECT 1 FROM follows WHERE follower_id = \(userID) OR followee_id = \(userID)) AS left
                """).firstRow().decode("left", as: Bool.self)
            if left { return false }
            guard try connection.query("SELECT 1 FROM users WHERE id = \(userID) FOR UPDATE").rowCount == 1 else { return true }
            _ = try AccountDeletion.removeUser(userID, effects: effects, on: connection)
            return true
        }
        let ids = PostgresArray(partners)
        let theirs: SQLQuery = """
            (f.follower_id = \(userID) AND f.followee_id = ANY(\(ids))) OR (f.followee_id = \(userID) AND f.follower_id = ANY(\(ids)))
            """
        try effects.run(FollowEdges.removing(where: theirs, actor: userID, byAccountDeletion: true), on: connection)
        return false
    }
}
