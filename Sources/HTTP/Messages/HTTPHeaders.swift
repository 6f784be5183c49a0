/// Header fields in arrival order. Repeated fields are kept, never collapsed, so that
/// framing checks (two `Content-Length`s, two `Host`s) can see every copy.
public struct HTTPHeaders: Sendable, Equatable, Sequence {
    public typealias Field = (name: String, value: String)

    private var fields: [Field] = []

    public init() {}

    public init(_ fields: [(String, String)]) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    public var count: Int { fields.count }

    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// The first value of the field, if any.
    public subscript(name: String) -> String? {
        for field in fields where Self.namesMatch(field.name, name) { return field.value }
        return nil
    }

    public func values(of name: String) -> [String] {
        fields.filter { Self.namesMatch($0.name, name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// The comma-separated list elements of every field of that name, trimmed and lowercased.
    public func tokens(of name: String) -> [String] {
        values(of: name).flatMap { $0.split(separator: ",") }
            .map { $0.trimmingHTTPWhitespace().lowercased() }
            .filter { !$0.isEmpty }
    }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// ASCII case-insensitive comparison; header names are ASCII tokens.
    static func namesMatch(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                guard x.count == y.count else { return false }
                for i in 0..<x.count where x[i] | 0x20 != y[i] | 0x20 { return false }
                return true
            }
        }
    }
}

extension StringProtocol {
    /// Strips spaces and horizontal tabs (HTTP's OWS), nothing else.
    func trimmingHTTPWhitespace() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
