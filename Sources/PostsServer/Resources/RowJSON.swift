import HTTP
import Postgres

/// The value writers behind `ResourceShape` and the change feed: a column's bytes as JSON,
/// straight from libpq's buffers.
enum RowJSON {
    /// The rows of a page asked for with one row too many, as a JSON array of at most
    /// `limit` items, and the last item shown when more follow (for the next cursor).
    static func page(_ rows: [PostgresRow], limit: Int,
                     _ append: (PostgresRow, inout [UInt8]) throws -> Void) throws -> (json: [UInt8], lastBeforeMore: PostgresRow?) {
        let shown = rows.prefix(limit)
        var json: [UInt8] = [UInt8(ascii: "[")]
        json.reserveCapacity(shown.count * 512 + 2)
        var index = shown.startIndex
        while index < shown.endIndex {
            if index > shown.startIndex { json.append(UInt8(ascii: ",")) }
            try append(shown[index], &json)
            index += 1
        }
        json.append(UInt8(ascii: "]"))
        return (json, rows.count > limit ? shown.last : nil)
    }

    /// The column's text as a JSON string (or null), escaped from the raw bytes.
    static func appendText(_ row: PostgresRow, _ column: Int, to out: inout [UInt8]) {
        row.withBytes(at: column) { bytes in
            if let bytes { JSONText.appendQuoted(bytes: bytes, to: &out) } else { out += "null".utf8 }
        }
    }

    static func appendTimestamp(_ row: PostgresRow, _ column: Int, to out: inout [UInt8]) throws {
        out.append(UInt8(ascii: "\""))
        let time = try row.timestamp(at: column)
        Timestamp.append(millisecondsSince1970: time.millisecondsSince1970, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// A uuid column as its lowercase text, `8-4-4-4-12` hex digits (null for NULL).
    static func appendUUID(_ row: PostgresRow, _ column: Int, to out: inout [UInt8]) {
        row.withBytes(at: column) { bytes in
            guard let bytes else { return out += "null".utf8 }
            out.append(UInt8(ascii: "\""))
            defer { out.append(UInt8(ascii: "\"")) }
            guard bytes.count == 16 else { return }
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { out.append(UInt8(ascii: "-")) }
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0xF)])
            }
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func appendInteger(_ value: Int64?, to out: inout [UInt8]) {
        if let value { appendInteger(value, to: &out) } else { out += "null".utf8 }
    }

    /// Decimal digits without making a `String`.
    static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(20 - count)...]))
        }
    }
}
