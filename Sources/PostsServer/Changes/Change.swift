import HTTP
import Postgres

/// One recorded change as the feed hands it out: its key, what the filters look at, and
/// its JSON (API.md's Change object) written once for every reader.
struct Change: Sendable {
    let key: ChangeKey
    let type: String
    let at: PostgresTimestamp
    let postID: Int64?
    let parentID: Int64?
    let oldParentID: Int64?
    let reparented: Bool
    let userID: Int64
    /// A notification's recipient: a private change, for that user's streams only.
    let recipientID: Int64?
    let json: [UInt8]

    /// What a query selects to make one (`c` is the changes alias), read back by name.
    static let columns = """
        c.txid::text::bigint AS txid, c.position, c.type, c.at, c.post_id, c.parent_id, c.old_parent_id, \
        c.reparented, c.user_id, c.data::text AS data, c.recipient_id
        """

    init(row: PostgresRow) throws {
        key = ChangeKey(txid: try row.decode("txid"), position: try row.decode("position"))
        type = try row.decode("type")
        at = try row.decode("at")
        postID = try row.decode("post_id")
        parentID = try row.decode("parent_id")
        oldParentID = try row.decode("old_parent_id")
        reparented = try row.decode("reparented")
        userID = try row.decode("user_id")
        recipientID = try row.decode("recipient_id")
        let data = try row.position(of: "data")
        var out: [UInt8] = []
        out.reserveCapacity(512)
        // A notification's change carries the notification as the list shows it, nothing more.
        if recipientID != nil {
            row.withBytes(at: data) { bytes in if let bytes { JSONText.appendCompacted(json: bytes, to: &out) } }
            json = out
            return
        }
        out += #"{"seq":"#.utf8
        JSONText.appendQuoted(key.text, to: &out)
        out += #","type":"#.utf8
        JSONText.appendQuoted(type, to: &out)
        out += #","at":"#.utf8
        out.append(UInt8(ascii: "\""))
        Timestamp.append(millisecondsSince1970: at.millisecondsSince1970, to: &out)
        out.append(UInt8(ascii: "\""))
        // A profile's or a follow's change is about no post: it has neither field.
        if !type.hasPrefix("profile.") && !type.hasPrefix("follow.") {
            out += #","post_id":"#.utf8
            RowJSON.appendInteger(postID, to: &out)
            out += #","parent_id":"#.utf8
            RowJSON.appendInteger(parentID, to: &out)
        }
        out += #","user_id":"#.utf8
        RowJSON.appendInteger(userID, to: &out)
        // The type's own fields: the stored object's members, after these, written as
        // compactly as the routes write theirs.
        row.withBytes(at: data) { bytes in
            guard let bytes else { return }
            let start = out.count
            JSONText.appendCompacted(json: bytes, to: &out)
            guard out.count - start > 2, out[start] == UInt8(ascii: "{"), out[out.count - 1] == UInt8(ascii: "}") else {
                return out.removeSubrange(start...)
            }
            out[start] = UInt8(ascii: ",")
            out.removeLast()
        }
        out.append(UInt8(ascii: "}"))
        json = out
    }

    /// The Server-Sent Event: `id`, `event`, one line of `data`, a blank line.
    var event: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(json.count + 64)
        out += "id: \(key.text)\nevent: \(type)\ndata: ".utf8
        // JSON strings escape newlines, so the object is already one line.
        out += json
        out += "\n\n".utf8
        return out
    }
}
