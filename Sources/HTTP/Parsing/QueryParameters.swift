/// The decoded `name=value` pairs of a query string (or a urlencoded form), in order.
public struct QueryParameters: Sendable, Equatable {
    public private(set) var pairs: [(name: String, value: String)] = []

    public init() {}

    /// Nil when the text is not well-formed percent-encoded UTF-8.
    public init?<S: StringProtocol>(parsing text: S) {
        for element in text.split(separator: "&", omittingEmptySubsequences: true) {
            let (rawName, rawValue) = element.firstIndex(of: "=").map {
                (element[..<$0], element[element.index(after: $0)...])
            } ?? (element[...], element[element.endIndex...])
            guard let name = PercentDecoding.decode(rawName, plusAsSpace: true),
                  let value = PercentDecoding.decode(rawValue, plusAsSpace: true)
            else { return nil }
            pairs.append((name: name, value: value))
        }
    }

    /// The first value given for the name.
    public subscript(name: String) -> String? {
        pairs.first { $0.name == name }?.value
    }

    public static func == (lhs: QueryParameters, rhs: QueryParameters) -> Bool {
        lhs.pairs.count == rhs.pairs.count && zip(lhs.pairs, rhs.pairs).allSatisfy { $0 == $1 }
    }
}
