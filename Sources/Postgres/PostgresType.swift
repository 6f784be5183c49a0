/// The PostgreSQL type OIDs this layer binds and decodes (pg_type.oid; stable across versions).
public struct PostgresType: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let unspecified = PostgresType(rawValue: 0)
    public static let bool = PostgresType(rawValue: 16)
    public static let bytea = PostgresType(rawValue: 17)
    public static let name = PostgresType(rawValue: 19)
    public static let int8 = PostgresType(rawValue: 20)
    public static let int2 = PostgresType(rawValue: 21)
    public static let int4 = PostgresType(rawValue: 23)
    public static let text = PostgresType(rawValue: 25)
    public static let oid = PostgresType(rawValue: 26)
    public static let json = PostgresType(rawValue: 114)
    public static let float4 = PostgresType(rawValue: 700)
    public static let float8 = PostgresType(rawValue: 701)
    public static let bpchar = PostgresType(rawValue: 1042)
    public static let varchar = PostgresType(rawValue: 1043)
    public static let timestamp = PostgresType(rawValue: 1114)
    public static let timestamptz = PostgresType(rawValue: 1184)
    public static let uuid = PostgresType(rawValue: 2950)
    public static let jsonb = PostgresType(rawValue: 3802)
    public static let textArray = PostgresType(rawValue: 1009)
    public static let int8Array = PostgresType(rawValue: 1016)

    var isText: Bool {
        self == .text || self == .varchar || self == .bpchar || self == .name || self == .json
    }
}
