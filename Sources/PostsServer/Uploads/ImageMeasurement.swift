import Foundation
import Images
import Logging
import Postgres
import Synchronization

/// Migration 0009's companion step: posts whose image was stored before images were
/// measured get `image_width`/`image_height` from their file's header, on a background
/// thread after start, a batch at a time. Files are read, never changed. A post whose file
/// is gone or unreadable keeps nulls. If the database goes away it stops and the next
/// start takes over where it left off (it only looks at rows still unmeasured).
final class ImageMeasurement: Sendable {
    private let pool: ConnectionPool
    private let images: ImageStore
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchGroup()

    init(pool: ConnectionPool, images: ImageStore, logger: Logger) {
        self.pool = pool
        self.images = images
        self.logger = logger
    }

    func start() {
        finished.enter()
        let thread = Thread { [self] in
            defer { finished.leave() }
            do {
                let measured = try measureAll()
                if measured > 0 { logger.info("measured stored images", metadata: ["posts": "\(measured)"]) }
            } catch {
                logger.warning("measuring stored images stopped; the next start goes on", metadata: ["error": "\(error)"])
            }
        }
        thread.name = "image-measurement"
        thread.start()
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        finished.wait()
    }

    private static let batchSize = 100

    /// Walks the unmeasured posts by id, so that a post it cannot measure is passed once.
    private func measureAll() throws -> Int {
        var after: Int64 = 0
        var measured = 0
        while !stopping.load(ordering: .relaxed) {
            let rows = try pool.withConnection { connection in
                try connection.query("""
                    SELECT id, image_url FROM posts
                    WHERE id > \(after) AND image_width IS NULL AND image_url LIKE '/uploads/%'
                    ORDER BY id LIMIT \(Self.batchSize)
                    """).rows.map { (id: try $0.decode("id", as: Int64.self), url: try $0.decode("image_url", as: String.self)) }
            }
            guard let last = rows.last else { break }
            after = last.id
            for row in rows {
                // A store that cannot answer now: this one waits for the next start.
                guard let name = StoredImageName(url: row.url),
                      let copy = try? images.withLocalCopy(of: name, { ImagePipeline.measure($0, as: name.format) }),
                      let size = copy else { continue }
                let (width, height) = (Int32(size.width), Int32(size.height))
                try pool.withConnection { connection in
                    try connection.query("""
                        UPDATE posts SET image_width = \(width), image_height = \(height)
                        WHERE id = \(row.id) AND image_url = \(row.url) AND image_width IS NULL
                        """)
                }
                measured += 1
            }
        }
        return measured
    }
}
