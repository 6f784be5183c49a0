import Foundation

/// One bound parameter: its type and its bytes in PostgreSQL's binary format (nil is NULL).
/// Binary with explicit lengths, so no value is ever read as text or cut at a NUL byte.
public struct PostgresValue: Sendable, Equatable {
    public let type: PostgresType
    public let bytes: [UInt8]?

    public init(type: PostgresType, bytes: [UInt8]?) {
        self.type = type
        self.bytes = bytes
    }

    public static let null = PostgresValue(type: .unspecified, bytes: nil)
}

/// A Swift value that can be a bind parameter.
public protocol PostgresBindable: Sendable {
    var postgresValue: PostgresValue { get }
}

extension FixedWidthInteger {
    var bigEndianBytes: [UInt8] { withUnsafeBytes(of: bigEndian) { Array($0) } }
}

extension Int: PostgresBindable {
    public var postgresValue: PostgresValue { PostgresValue(type: .int8, bytes: Int64(self).bigEndianBytes) }
}

extension Int64: PostgresBindable {
    public var postgresValue: PostgresValue { PostgresValue(type: .int8, bytes: bigEndianBytes) }
}

extension Int32: PostgresBindable {
    public var postgresValue: PostgresValue { PostgresValue(type: .int4, bytes: bigEndianBytes) }
}

extension Bool: PostgresBindable {
    public var postgresValue: PostgresValue { PostgresValue(type: .bool, bytes: [self ? 1 : 0]) }
}

extension Double: PostgresBindable {
    public var postgresValue: PostgresValue { PostgresValue(type: .float8, bytes: bitPattern.bigEndianBytes) }
}

extension String: PostgresBindable {
    public var postgresValue: PostgresValue { PostgresValue(type: .text, bytes: Array(utf8)) }
}

extension Substring: PostgresBindable {
    public var postgresValue: PostgresValue { PostgresValue(type: .text, bytes: Array(utf8)) }
}

extension UUID: PostgresBindable {
    public var postgresValue: PostgresValue {
        PostgresValue(type: .uuid, bytes: withUnsafeBytes(of: uuid) { Array($0) })
    }
}

extension Array: PostgresBindable where Element == UInt8 {
    public var postgresValue: PostgresValue { PostgresValue(type: .bytea, bytes: self) }
}

extension Data: PostgresBindable {
    public var postgresValue: PostgresValue { PostgresValue(type: .bytea, bytes: Array(self)) }
}

extension Date: PostgresBindable {
    /// timestamptz: microseconds since 2000-01-01 00:00 UTC.
    public var postgresValue: PostgresValue {
        let micros = Int64(((timeIntervalSince1970 - PostgresEpoch.unixOffset) * 1_000_000).rounded())
        return PostgresValue(type: .timestamptz, bytes: micros.bigEndianBytes)
    }
}

extension Optional: PostgresBindable where Wrapped: PostgresBindable {
    public var postgresValue: PostgresValue {
        switch self {
        case .some(let value): value.postgresValue
        case .none: .null
        }
    }
}

enum PostgresEpoch {
    /// Seconds from 1970-01-01 to 2000-01-01, PostgreSQL's epoch for binary timestamps.
    static let unixOffset: TimeInterval = 946_684_800
}

/// A one-dimensional array parameter (`= ANY(…)`, `unnest(…)`), in PostgreSQL's binary
/// array format: a header, then each element with its length.
public struct PostgresArray: PostgresBindable {
    public let postgresValue: PostgresValue

    public init(_ strings: [String]) {
        self.init(elements: strings.map { Array($0.utf8) }, type: .textArray, elementType: .text)
    }

    public init(_ integers: [Int64]) {
        self.init(elements: integers.map(\.bigEndianBytes), type: .int8Array, elementType: .int8)
    }

    private init(elements: [[UInt8]], type: PostgresType, elementType: PostgresType) {
        var bytes: [UInt8] = []
        bytes += Int32(1).bigEndianBytes                        // dimensions
        bytes += Int32(0).bigEndianBytes                        // no NULL elements
        bytes += elementType.rawValue.bigEndianBytes
        bytes += Int32(elements.count).bigEndianBytes
        bytes += Int32(1).bigEndianBytes                        // lower bound
        for element in elements {
            bytes += Int32(element.count).bigEndianBytes
            bytes += element
        }
        postgresValue = PostgresValue(type: type, bytes: bytes)
    }
}
