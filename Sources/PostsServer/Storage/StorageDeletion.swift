import Postgres

/// Deletes the stored images that commits dropped: the `storage.delete` jobs
/// (`JobKind.storageDeletion`), queued by every write that stops naming an image (an edit,
/// a delete, an account's deletion, a moderator's removal, an avatar replaced) in its own
/// transaction. An image goes with its sizes unless a post or profile names its URL again;
/// while the store is down the jobs back off and wait, so nothing is left behind once it is
/// back. While the store is failing, the upkeep asks it whether it is back, so
/// `/api/health` recovers without traffic.
final class StorageDeletion: JobHandler {
    private let store: any ObjectStore

    init(store: any ObjectStore) {
        self.store = store
    }

    /// The deletion kind's place in the job runner.
    static func worker(store: any ObjectStore, metrics: StorageMetrics) -> JobWorker {
        JobWorker(kind: .storageDeletion, makeHandler: { _ in StorageDeletion(store: store) }, upkeep: { _ in
            guard metrics.isFailing else { return }
            // Still down: the state stays failing and the queue waits. Back: the metrics log it.
            try? store.probe()
        })
    }

    func perform(_ jobs: [ClaimedJob], context: JobContext) throws -> [JobOutcome] {
        let images = try load(jobs, on: context.pool)
        return context.tryInOrder(jobs) { job in
            guard let image = images[job.id], !image.referenced, let name = StoredImageName(url: image.url) else {
                return .skipped
            }
            do {
                try store.delete(name.allNames)
                return .done
            } catch {
                return .retry("\(error)")
            }
        }
    }

    private struct Image {
        let url: String
        let referenced: Bool
    }

    private func load(_ jobs: [ClaimedJob], on pool: ConnectionPool) throws -> [Int64: Image] {
        try pool.withConnection { connection in
            var images: [Int64: Image] = [:]
            for row in try connection.query("""
                SELECT j.id, d.url, EXISTS (SELECT 1 FROM posts WHERE image_url = d.url)
                                    OR EXISTS (SELECT 1 FROM profiles WHERE avatar_url = d.url) AS referenced
                FROM jobs j, LATERAL (SELECT \(JobPayload.member(.url, of: "j.payload")) AS url) d
                WHERE j.id = ANY(\(PostgresArray(jobs.map(\.id)))) AND d.url IS NOT NULL
                """).rows {
                images[try row.decode("id")] = Image(url: try row.decode("url"), referenced: try row.decode("referenced"))
            }
            return images
        }
    }
}
