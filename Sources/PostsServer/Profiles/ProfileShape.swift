import Postgres

/// API.md's Profile: its members in one list (see `ResourceShape`). Queries name the
/// profiles row `pr`.
enum ProfileShape {
    static let shape = ResourceShape([
        ResourceField("user_id", "pr.user_id", .integer),
        ResourceField("username", "pr.username", .text),
        ResourceField("full_name", "pr.full_name", .text),
        ResourceField("bio", "pr.bio", .text),
        ResourceField("avatar_url", "pr.avatar_url", .text),
        ResourceField("created_at", "pr.created_at", .time),
    ])

    static let columns = shape.selectList()

    /// The profile as a `json` expression, for the change a write records.
    static let json = shape.jsonSQL

    /// The profile whose columns start at `first`, as a JSON object.
    static func append(_ row: PostgresRow, from first: Int = 0, to out: inout [UInt8]) throws {
        try shape.append(row, from: first, to: &out)
    }
}
