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

        /// Splices text into the SQL. Only for constants written in this codebase.
        public mutating func appendInterpolation(unsafeSQL text: String) {
            sql += text
        }
    }
}
