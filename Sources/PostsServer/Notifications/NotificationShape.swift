import Postgres

/// API.md's notification: its members in one list (see `ResourceShape`). Queries name the
/// notification `n` and the actor's profile `pr`. Its `json` is the same object in SQL, what
/// a notification's private change carries to the live stream (`EventEffects`);
/// `NotificationTests` holds the two equal byte for byte.
enum NotificationShape {
    static let shape = ResourceShape([
        ResourceField("id", "n.id", .integer),
        ResourceField("type", "n.type", .text),
        ResourceField("created_at", "n.created_at", .time),
        ResourceField("read", "n.read", .flag),
        ResourceField("actor", "pr", .object(ProfileShape.shape)),
        ResourceField("post_id", "n.post_id", .integer),
        ResourceField("comment_id", "n.comment_id", .uuid),
    ])

    static let columns = shape.selectList()

    /// The object as a `json` expression: what the test compares the migration's with.
    static let json = shape.jsonSQL

    static func append(_ row: PostgresRow, to out: inout [UInt8]) throws {
        try shape.append(row, to: &out)
    }

    /// The page's cursor after `row` (its `created_at` and `id`).
    static func cursor(after row: PostgresRow) throws -> KeysetCursor {
        KeysetCursor(createdAt: try row.decode("created_at"), id: try row.decode("id"))
    }
}
