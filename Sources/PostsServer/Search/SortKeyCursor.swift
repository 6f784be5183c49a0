/// A keyset cursor over a sort key of several integers (search's orders: a rank and an id;
/// exact match, followed, followers and an id; …): the last item's key, opaque to clients
/// (base64url of big-endian integers). A cursor of another length than the order's is 400.
struct SortKeyCursor: Equatable, Sendable {
    let values: [Int64]

    init(_ values: [Int64]) {
        self.values = values
    }

    init(_ text: String, length: Int) throws(APIError) {
        guard let bytes = Base64URL.decode(text), bytes.count == 8 * length else { throw .malformed("malformed cursor") }
        values = (0..<length).map { Int64(bigEndianBytes: bytes[(8 * $0)..<(8 * $0 + 8)]) }
    }

    var text: String { Base64URL.encode(values.flatMap(\.bigEndianByteArray)) }

    /// A relevance rank (a `real`, exact in a `double precision`) as a key value.
    static func key(_ rank: Double) -> Int64 { Int64(bitPattern: rank.bitPattern) }

    static func rank(_ key: Int64) -> Double { Double(bitPattern: UInt64(bitPattern: key)) }
}
