import Foundation

/// A Swift type a column can be read as, from PostgreSQL's binary format.
public protocol PostgresDecodable {
    /// Nil when the column's type or bytes do not fit this Swift type.
    init?(postgresBytes bytes: UnsafeRawBufferPointer, type: PostgresType)
    /// What a NULL becomes; nil (the default) makes NULL a decoding error.
    static var decodedNull: Self? { get }
}

extension PostgresDecodable {
    public static var decodedNull: Self? { nil }
}

extension UnsafeRawBufferPointer {
    fileprivate func bigEndianInteger<T: FixedWidthInteger>(_: T.Type) -> T? {
        guard count == MemoryLayout<T>.size else { return nil }
        var value = T.zero
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: self) }
        return T(bigEndian: value)
    }

    /// Any PostgreSQL integer column, widened.
    fileprivate func integer(type: PostgresType) -> Int64? {
        switch type {
        case .int8: bigEndianInteger(Int64.self)
        case .int4: bigEndianInteger(Int32.self).map(Int64.init)
        case .int2: bigEndianInteger(Int16.self).map(Int64.init)
        case .oid: bigEndianInteger(UInt32.self).map(Int64.init)
        default: nil
        }
    }
}

extension Int64: PostgresDecodable {
    public init?(postgresBytes bytes: UnsafeRawBufferPointer, type: PostgresType) {
        guard let value = bytes.integer(type: type) else { return nil }
        self = value
    }
}

extension Int: PostgresDecodable {
    public init?(postgresBytes bytes: UnsafeRawBufferPointer, type: PostgresType) {
        guard let value = bytes.integer(type: type) else { return nil }
        self = Int(value)
    }
}

extension Int32: PostgresDecodable {
    public init?(postgresBytes bytes: UnsafeRawBufferPointer, type: PostgresType) {
        guard let value = bytes.integer(type: type), let narrow = Int32(exactly: value) else { return nil }
        self = narrow
    }
}

extension Bool: PostgresDecodable {
    public init?(postgresBytes bytes: UnsafeRawBufferPointer, type: PostgresType) {
        guard type == .bool, bytes.count == 1 else { return nil }
        self = bytes[0] != 0
    }
}

extension Double: PostgresDecodable {
    public init?(postgresBytes bytes: UnsafeRawBufferPointer, type: PostgresType) {
        switch type {
        case .float8:
            guard let bits = bytes.bigEndianInteger(UInt64.self) else { return nil }
            self = Double(bitPattern: bits)
        case .float4:
            guard let bits = bytes.bigEndianInteger(UInt32.self) else { return nil }
            self = Double(Float(bitPattern: bits))
        default:
            guard let integer = bytes.integer(type: type) else { return nil }
            self = Double(integer)
        }
    }
}

extension String: PostgresDecodable {
    public init?(postgresBytes bytes: UnsafeRawBufferPointer, type: PostgresType) {
        if type.isText {
            self = String(decoding: bytes, as: UTF8.self)
        } else if type == .jsonb, bytes.first == 1 {
            self = String(decoding: UnsafeRawBufferPointer(rebasing: bytes.dropFirst()), as: UTF8.self)
        } else {
            return nil
        }
    }
}

extension UUID: PostgresDecodable {
    public init?(postgresBytes bytes: UnsafeRawBufferPointer, type: PostgresType) {
        guard type == .uuid, bytes.count == 16 else { return nil }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { $0.copyMemory(from: bytes) }
        self = UUID(uuid: raw)
    }
}

extension Array: PostgresDecodable where Element == UInt8 {
    public init?(postgresBytes bytes: UnsafeRawBufferPointer, type: PostgresType) {
        guard type == .bytea else { return nil }
        self = Array(bytes)
    }
}

extension Data: PostgresDecodable {
    public init?(postgresBytes bytes: UnsafeRawBufferPointer, type: PostgresType) {
        guard type == .bytea else { return nil }
        self = Data(bytes)
    }
}

/// A timestamp as PostgreSQL keeps it: microseconds since 2000-01-01 UTC. Decoding into
/// this instead of `Date` keeps every digit (a `Double` rounds at the microsecond).
public struct PostgresTimestamp: Hashable, Sendable, PostgresDecodable, PostgresBindable {
    public let microsecondsSince2000: Int64

    public init(microsecondsSince2000: Int64) { self.microsecondsSince2000 = microsecondsSince2000 }

    /// The instants a timestamptz holds (PostgreSQL's MIN_TIMESTAMP ..< END_TIMESTAMP, 4713 BC
    /// to 294276 AD): binding one outside this range is an error (SQLSTATE 22008), so a value
    /// from a client (a cursor) is checked against it first.
    public static let finiteRange: Range<Int64> = -211_813_488_000_000_000 ..< 9_223_371_331_200_000_000

    public init?(postgresBytes bytes: UnsafeRawBufferPointer, type: PostgresType) {
        guard type == .timestamptz || type == .timestamp, let micros = bytes.bigEndianInteger(Int64.self) else {
            return nil
        }
        microsecondsSince2000 = micros
    }

    public var postgresValue: PostgresValue {
        PostgresValue(type: .timestamptz, bytes: microsecondsSince2000.bigEndianBytes)
    }

    public var millisecondsSince1970: Int64 {
        let micros = microsecondsSince2000 + Int64(PostgresEpoch.unixOffset) * 1_000_000
        return micros >= 0 ? micros / 1000 : (micros - 999) / 1000
    }

    public var date: Date {
        Date(timeIntervalSince1970: PostgresEpoch.unixOffset + Double(microsecondsSince2000) / 1_000_000)
    }
}

extension Date: PostgresDecodable {
    public init?(postgresBytes bytes: UnsafeRawBufferPointer, type: PostgresType) {
        guard let timestamp = PostgresTimestamp(postgresBytes: bytes, type: type) else { return nil }
        self = timestamp.date
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public init?(postgresBytes bytes: UnsafeRawBufferPointer, type: PostgresType) {
        guard let value = Wrapped(postgresBytes: bytes, type: type) else { return nil }
        self = .some(value)
    }

    public static var decodedNull: Self? { .some(.none) }
}
