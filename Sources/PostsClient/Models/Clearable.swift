/// A new value for a field that may also be emptied: on the wire, the value or `null`.
/// Leaving the field alone is the absence of a `Clearable` (an optional one set to nil).
public enum Clearable<Value: Sendable & Equatable>: Sendable, Equatable {
    case set(Value)
    case clear
}

extension Clearable where Value == String {
    var json: JSONValue {
        switch self {
        case .set(let text): .string(text)
        case .clear: .null
        }
    }
}
