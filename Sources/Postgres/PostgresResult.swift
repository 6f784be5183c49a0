import CLibPQ

/// The rows of one statement, read straight from libpq's result (binary format).
public final class PostgresResult: @unchecked Sendable {
    // Immutable once made; libpq results are plain memory, safe to read from any thread.
    private let handle: OpaquePointer
    public let sql: String
    public let rowCount: Int
    /// Rows the statement changed (INSERT/UPDATE/DELETE), 0 for others.
    public let affectedRows: Int

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
        rowCount = Int(PQntuples(handle))
        affectedRows = Int(String(cString: PQcmdTuples(handle))) ?? 0
    }

    deinit { PQclear(handle) }

    public var rows: [PostgresRow] { (0..<rowCount).map { PostgresRow(result: self, index: Int32($0)) } }

    public var first: PostgresRow? { rowCount > 0 ? PostgresRow(result: self, index: 0) : nil }

    /// The first row of a statement that always answers one (an aggregate, a `SELECT` of
    /// expressions, an upsert's `RETURNING`). Answering none is a `.decoding` error, never
    /// a crash: a trap on a request or background thread would take every connection down.
    public func firstRow(file: String = #fileID, line: Int = #line) throws(PostgresError) -> PostgresRow {
        guard let row = first else {
            throw PostgresError(.decoding, details: "expected a row, got none, from: \(sql)", file: file, line: line)
        }
        return row
    }

    fileprivate func decode<Value: PostgresDecodable>(row: Int32, column name: String, as type: Value.Type,
                                                      file: String, line: Int) throws(PostgresError) -> Value {
        try decode(row: row, column: try position(of: name, file: file, line: line), as: type, file: file, line: line)
    }

    /// The position of the column of that name. A scan of libpq's names, byte for byte: a
    /// result has a few dozen columns at most, and an index of them built for every result
    /// (a String and a hash per column) cost pages of comments a tenth of their throughput
    /// (`bench/compare-builds.sh`, against the build before names: 0.93× with it, 1.06×
    /// without).
    fileprivate func position(of name: String, file: String, line: Int) throws(PostgresError) -> Int32 {
        var name = name
        let found = name.withUTF8 { wanted -> Int32? in
            for column in 0..<PQnfields(handle) {
                guard let candidate = PQfname(handle, column) else { continue }
                // Column names hold no NUL byte: the terminator ends a mismatch, never a read.
                var index = 0
                while index < wanted.count, UInt8(bitPattern: candidate[index]) == wanted[index] { index += 1 }
                if index == wanted.count, candidate[index] == 0 { return column }
            }
            return nil
        }
        guard let found else {
            throw PostgresError(.decoding, details: "no column \"\(name)\" in the result of: \(sql)", file: file, line: line)
        }
        return found
    }

    fileprivate func bytes(row: Int32, column: Int32) -> UnsafeRawBufferPointer? {
        guard row < rowCount, column >= 0, column < PQnfields(handle), PQgetisnull(handle, row, column) == 0 else {
            return nil
        }
        return UnsafeRawBufferPointer(start: PQgetvalue(handle, row, column), count: Int(PQgetlength(handle, row, column)))
    }

    fileprivate func decode<Value: PostgresDecodable>(row: Int32, column: Int32, as type: Value.Type,
                                                      file: String, line: Int) throws(PostgresError) -> Value {
        guard column >= 0, column < PQnfields(handle) else {
            throw PostgresError(.decoding, details: "no column #\(column) in the result of: \(sql)", file: file, line: line)
        }
        // The name only for an error message: reading it costs a String per column.
        var name: String { String(cString: PQfname(handle, column)) }
        let columnType = PostgresType(rawValue: PQftype(handle, column))
        if PQgetisnull(handle, row, column) == 1 {
            guard let null = Value.decodedNull else {
                throw PostgresError(.decoding, details: "column \"\(name)\" (#\(column)) is NULL; \(Value.self) cannot hold NULL",
                                    file: file, line: line)
            }
            return null
        }
        let bytes = UnsafeRawBufferPointer(start: PQgetvalue(handle, row, column), count: Int(PQgetlength(handle, row, column)))
        guard let value = Value(postgresBytes: bytes, type: columnType) else {
            throw PostgresError(.decoding,
                                details: "column \"\(name)\" (#\(column), type oid \(columnType.rawValue)) does not decode as \(Value.self)",
                                file: file, line: line)
        }
        return value
    }
}

/// One row of a result; columns are read by name, or by position on hot paths.
public struct PostgresRow: Sendable {
    let result: PostgresResult
    let index: Int32

    public func decode<Value: PostgresDecodable>(_ column: String, as type: Value.Type = Value.self,
                                                 file: String = #fileID, line: Int = #line) throws(PostgresError) -> Value {
        try result.decode(row: index, column: column, as: type, file: file, line: line)
    }

    /// The column at `position` (0-based, in the SELECT's order), without a lookup by name.
    public func decode<Value: PostgresDecodable>(at position: Int, as type: Value.Type = Value.self,
                                                 file: String = #fileID, line: Int = #line) throws(PostgresError) -> Value {
        try result.decode(row: index, column: Int32(position), as: type, file: file, line: line)
    }

    /// The hot paths' reads by position (a page's JSON, every field of every row), as calls
    /// the compiler specializes here: called from another module, the generic `decode(at:)`
    /// looked up `Optional<Int64>`'s type metadata at run time on every call, 7% of the
    /// server's CPU for a page of 50 posts (perf).
    public func int64OrNil(at position: Int) throws(PostgresError) -> Int64? { try decode(at: position, as: Int64?.self) }
    public func int32(at position: Int) throws(PostgresError) -> Int32 { try decode(at: position, as: Int32.self) }
    public func bool(at position: Int) throws(PostgresError) -> Bool { try decode(at: position, as: Bool.self) }
    public func boolOrNil(at position: Int) throws(PostgresError) -> Bool? { try decode(at: position, as: Bool?.self) }
    public func timestamp(at position: Int) throws(PostgresError) -> PostgresTimestamp {
        try decode(at: position, as: PostgresTimestamp.self)
    }

    /// The raw bytes of the column at `position` (nil for NULL), valid only inside `body`:
    /// text goes from libpq's buffer into a response without becoming a `String`.
    public func withBytes<Result>(at position: Int, _ body: (UnsafeRawBufferPointer?) throws -> Result) rethrows -> Result {
        try body(result.bytes(row: index, column: Int32(position)))
    }

    /// Whether the named column is NULL in this row (an outer join that found nothing).
    public func isNull(_ column: String, file: String = #fileID, line: Int = #line) throws(PostgresError) -> Bool {
        result.bytes(row: index, column: try result.position(of: column, file: file, line: line)) == nil
    }

    /// The position of the named column: where a resource's columns start, looked up once
    /// by the name of their first (for `ResourceShape`, which reads them in order).
    public func position(of column: String, file: String = #fileID, line: Int = #line) throws(PostgresError) -> Int {
        Int(try result.position(of: column, file: file, line: line))
    }
}
