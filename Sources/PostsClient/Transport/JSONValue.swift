/// A field value of a request body: JSON needs `null` and exact types, a multipart form
/// needs the same values as text.
enum JSONValue: Encodable, Sendable, Equatable {
    case string(String)
    case int(Int)
    case bool(Bool)
    case null

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let text): try container.encode(text)
        case .int(let number): try container.encode(number)
        case .bool(let flag): try container.encode(flag)
        case .null: try container.encodeNil()
        }
    }

    /// The form value: a form has no null, and the server reads an empty value as one.
    var formText: String {
        switch self {
        case .string(let text): text
        case .int(let number): String(number)
        case .bool(let flag): flag ? "true" : "false"
        case .null: ""
        }
    }
}

/// An object whose members keep their order (stable bodies are easier to read in logs).
struct JSONFields: Encodable, Sendable {
    let fields: [(String, JSONValue)]

    init(_ fields: [(String, JSONValue)]) { self.fields = fields }

    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (name, value) in fields { try container.encode(value, forKey: Key(stringValue: name)) }
    }
}
