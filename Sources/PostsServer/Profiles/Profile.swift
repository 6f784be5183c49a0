import Postgres

/// API.md's Profile object.
struct Profile: Sendable, Equatable {
    let userID: Int64
    let username: String
    let fullName: String
    let bio: String
    let avatarURL: String?
    let createdAt: PostgresTimestamp

    /// The columns a query selects to make one (the profiles table's own names; a query
    /// that joins profiles prefixes them itself).
    static let columns = "user_id, username, full_name, bio, avatar_url, created_at"

    init(row: PostgresRow) throws {
        userID = try row.decode("user_id")
        username = try row.decode("username")
        fullName = try row.decode("full_name")
        bio = try row.decode("bio")
        avatarURL = try row.decode("avatar_url")
        createdAt = try row.decode("created_at")
    }

    var json: JSONObject {
        var object = JSONObject()
        object.add("user_id", userID)
        object.add("username", username)
        object.add("full_name", fullName)
        object.add("bio", bio)
        object.add("avatar_url", avatarURL)
        object.add("created_at", createdAt)
        return object
    }
}
