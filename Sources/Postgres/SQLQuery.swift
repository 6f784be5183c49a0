/// SQL whose interpolated values become bind parameters: `"… WHERE id = \(id)"` is sent as
/// `… WHERE id = $1` with `id` bound, so input can never become SQL text. Text that must
/// be spliced (a constant column list) needs the loud `\(unsafeSQL: …)` spelling.
public struct SQLQuery: Sendable, Equatable, ExpressibleByStringInterpolation, CustomStringConvertible {
    public private(set) var sql: String
    public private(set) var binds: [PostgresValue]

    public init(stringLiteral value: String) {
        sql = value
        binds = []
    }

    public init(stringInterpolation: StringInterpolation) {
        sql = stringInterpolation.sql
        binds = stringInterpolation.binds
    }

    public init(unsafeSQL sql: String, binds: [PostgresValue] = []) {
        self.sql = sql
        self.binds = binds
    }

    /// Appends another query, its binds after these: how a statement is assembled from
    /// optional parts (filters, a cursor) without splicing any value into the text.
    /// Fragments come from this type's interpolation, so their only `$` are bind numbers.
    public mutating func append(_ fragment: SQLQuery) {
        sql += Self.renumbered(fragment.sql, by: binds.count)
        binds += fragment.binds
    }

    /// `$n` placeholders shifted by `offset`. On every request (a page's statement is
    /// assembled from fragments), so it walks UTF-8 bytes: iterating `Character`s and
    /// Foundation's `contains` made it a tenth of a comments page's server time.
    static func renumbered(_ sql: String, by offset: Int) -> String {
        guard offset > 0 else { return sql }
        var text = sql
        return text.withUTF8 { bytes -> String in
            guard bytes.contains(dollar) else { return sql }
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + 16)
            var index = 0
            while index < bytes.count {
                guard bytes[index] == dollar else {
                    out.append(bytes[index])
                    index += 1
                    continue
                }
                var end = index + 1
                var number = 0
                // Bind numbers are small; a longer run of digits is copied as it is.
                while end < bytes.count, end - index <= 9, bytes[end] >= zero, bytes[end] <= zero + 9 {
                    number = number * 10 + Int(bytes[end] - zero)
                    end += 1
                }
                if end == index + 1 || (end < bytes.count && bytes[end] >= zero && bytes[end] <= zero + 9) {
                    out.append(contentsOf: bytes[index..<end])
                } else {
                    out.append(contentsOf: "$\(number + offset)".utf8)
                }
                index = end
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    private static let dollar = UInt8(ascii: "$")
    private static let zero = UInt8(ascii: "0")

    /// The SQL with values masked: safe for logs.
    public var description: String { "\(sql) [\(binds.count) binds: ****]" }

    public struct StringInterpolation: StringInterpolationProtocol {
        var sql = ""
        var binds: [PostgresValue] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql.reserveCapacity(literalCapacity + interpolationCount * 3)
            binds.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            sql += literal
        }

        public mutating func appendInterpolation(_ value: some PostgresBindable) {
            binds.append(value.postgresValue)
            sql += "$\(binds.count)"
        }

        /// An optional value: NULL when absent. Spelled out so that interpolating an
        /// optional is a deliberate bind, not the debug text String interpolation would make.
        public mutating func appendInterpolation<Value: PostgresBindable>(_ value: Value?) {
            binds.append(value.postgresValue)
            sql += "$\(binds.count)"
        }

        /// A query built elsewhere (a filter, say), its binds renumbered after these.
        public mutating func appendInterpolation(_ fragment: SQLQuery) {
            sql += SQLQuery.renumbered(fragment.sql, by: binds.count)
            binds += fragment.binds
        }

        /// An integer written into the text, not bound: a page's `LIMIT`. PostgreSQL cannot
        /// plan `LIMIT $n` once for every value (a generic plan assumes a tenth of the
        /// table), so such a statement is planned again on every execution; with the number
        /// in the text its plan is made once per connection and reused. An `Int` cannot
        /// carry SQL, and a page's limit takes few values (each its own statement).
        public mutating func appendInterpolation(literal value: Int) {
            sql += String(value)
        }

        /// Splices text into the SQL. Only for constants written in this codebase.
        public mutating func appendInterpolation(unsafeSQL text: String) {
            sql += text
        }
    }
}
