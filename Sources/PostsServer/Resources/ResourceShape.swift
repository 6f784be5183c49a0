import Postgres

/// One resource of API.md (a Post, a Profile, a Comment) described once: each member's JSON
/// key, the SQL expression that reads it and the kind of value it is. Everything that shows
/// the resource is made from this list, so adding a member is one line in its shape:
/// - `selectList`: what a query selects, each column aliased by its key;
/// - `append(_:from:to:)`: the JSON of a row, written by column position straight from
///   libpq's buffers (no `String` per member, no lookup by name, no `JSONEncoder`);
/// - `jsonSQL`: the same object as a `json_build_object` expression, which a write puts in
///   the change it records in the same statement (API.md "Changes and live events").
struct ResourceShape: Sendable {
    let fields: [ResourceField]
    /// How many result columns the shape reads (a nested object reads its own after its
    /// parent's earlier members).
    let columnCount: Int

    init(_ fields: [ResourceField]) {
        // json_build_object takes at most 100 arguments: 50 members.
        precondition(fields.count <= 50, "a resource shape has at most 50 members")
        self.fields = fields
        columnCount = fields.reduce(0) { $0 + $1.columnCount }
    }

    /// The select list, aliased `key` (or `prefix_key` inside a nested object, so that a
    /// comment's `user_id` and its author's stay apart in a subquery's columns).
    func selectList(prefix: String = "") -> String {
        fields.map { field in
            switch field.kind {
            case .object(let shape): shape.selectList(prefix: prefix + field.key + "_")
            default: "\(field.sql) AS \(prefix)\(field.key)"
            }
        }.joined(separator: ", ")
    }

    /// The object as a SQL `json` expression over the same aliases as `selectList`'s
    /// expressions: what a write records as the change's copy of the resource.
    var jsonSQL: String {
        let members = fields.map { field -> String in
            let value = switch field.kind {
            case .time: "to_char(\(field.sql) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
            case .object(let shape): shape.jsonSQL
            case .jsonArray: "coalesce(\(field.sql), '[]'::json)"
            default: field.sql
            }
            return "'\(field.key)', \(value)"
        }
        return "json_build_object(\(members.joined(separator: ", ")))"
    }

    /// The row's object, its columns starting at `first`; `trailing` writes members that
    /// depend on the caller (`liked_by_me`) before the object closes. Plain index loops:
    /// `enumerated()` and `zip` cost a metadata lookup per element in a debug build,
    /// which made a page of 100 posts several times slower there (CI's fault run uses one).
    func append(_ row: PostgresRow, from first: Int = 0, to out: inout [UInt8],
                trailing: ((inout [UInt8]) throws -> Void)? = nil) throws {
        out.append(UInt8(ascii: "{"))
        var column = first
        var index = 0
        while index < fields.count {
            let field = fields[index]
            out += index == 0 ? field.firstKeyBytes : field.keyBytes
            try field.appendValue(row, at: column, to: &out)
            column += field.columnCount
            index += 1
        }
        try trailing?(&out)
        out.append(UInt8(ascii: "}"))
    }

    /// A JSON array of the rows' objects.
    func appendArray(_ rows: ArraySlice<PostgresRow>, to out: inout [UInt8],
                     trailing: ((PostgresRow, inout [UInt8]) throws -> Void)? = nil) throws {
        out.append(UInt8(ascii: "["))
        var index = rows.startIndex
        while index < rows.endIndex {
            if index > rows.startIndex { out.append(UInt8(ascii: ",")) }
            let row = rows[index]
            if let trailing {
                try append(row, to: &out) { try trailing(row, &$0) }
            } else {
                try append(row, to: &out)
            }
            index += 1
        }
        out.append(UInt8(ascii: "]"))
    }
}

/// One member of a resource.
struct ResourceField: Sendable {
    enum Kind: Sendable {
        /// A bigint, or null.
        case integer
        /// An int (the counters kept in rows).
        case count
        /// Text, or null.
        case text
        case flag
        /// A timestamptz, shown as API.md's time (RFC 3339, UTC, milliseconds).
        case time
        /// A uuid, shown as its lowercase text, or null.
        case uuid
        /// A `json` column holding an array written compactly by this server, shown as it
        /// is (no parsing, no re-serialization); NULL shows as `[]`.
        case jsonArray
        /// Another resource, whose columns follow.
        case object(ResourceShape)
    }

    let key: String
    let sql: String
    let kind: Kind
    /// `,"key":` and `"key":`, made once.
    let keyBytes: [UInt8]
    let firstKeyBytes: [UInt8]

    init(_ key: String, _ sql: String, _ kind: Kind) {
        self.key = key
        self.sql = sql
        self.kind = kind
        firstKeyBytes = Array("\"\(key)\":".utf8)
        keyBytes = [UInt8(ascii: ",")] + firstKeyBytes
    }

    var columnCount: Int {
        if case .object(let shape) = kind { return shape.columnCount }
        return 1
    }

    func appendValue(_ row: PostgresRow, at column: Int, to out: inout [UInt8]) throws {
        switch kind {
        case .integer:
            if let value = try row.int64OrNil(at: column) { RowJSON.appendInteger(value, to: &out) } else {
                out += "null".utf8
            }
        case .count:
            RowJSON.appendInteger(Int64(try row.int32(at: column)), to: &out)
        case .text:
            RowJSON.appendText(row, column, to: &out)
        case .flag:
            out += (try row.bool(at: column) ? "true" : "false").utf8
        case .time:
            try RowJSON.appendTimestamp(row, column, to: &out)
        case .uuid:
            RowJSON.appendUUID(row, column, to: &out)
        case .jsonArray:
            row.withBytes(at: column) { bytes in
                if let bytes { out.append(contentsOf: bytes) } else { out += "[]".utf8 }
            }
        case .object(let shape):
            try shape.append(row, from: column, to: &out)
        }
    }
}
