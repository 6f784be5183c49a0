import Foundation
import HTTP

/// A request body's fields, whichever way they came: a JSON object, an urlencoded form or
/// a multipart form's text fields. Typed reads accept what each encoding can say (a form's
/// `parent_id=12` is a number too); a value of the wrong type is 400.
struct BodyFields: Sendable {
    private enum Value: Sendable, Equatable {
        case string(String)
        case integer(Int64)
        case bool(Bool)
        case null
        /// A number with a fraction, an array or an object: never a valid field here.
        case other
    }

    private let values: [String: Value]
    /// True when the values came as text (forms), which is how they must then be read.
    private let fromForm: Bool

    init(_ request: Request) throws(APIError) {
        if let form = request.form {
            values = Self.formValues(form.fields.map { ($0.name, $0.value) })
            fromForm = true
            return
        }
        switch RequestFields.mediaType(of: request) {
        case "application/json":
            values = try Self.jsonValues(try RequestBody.json(request))
            fromForm = false
        case "application/x-www-form-urlencoded":
            values = Self.formValues(try RequestBody.formFields(request).map { ($0.name, $0.value) })
            fromForm = true
        case "" where request.body.isEmpty:
            values = [:]
            fromForm = false
        default:
            throw APIError(.unsupportedMedia, "send application/json, multipart/form-data or a form")
        }
    }

    func contains(_ key: String) -> Bool { values[key] != nil }

    func isNull(_ key: String) -> Bool { values[key] == .null }

    func string(_ key: String) throws(APIError) -> String? {
        switch values[key] {
        case nil, .null: return nil
        case .string(let text): return text
        default: throw .malformed("\(key) must be a string")
        }
    }

    /// A whole number; from a form, its decimal text (an empty value is no value).
    func integer(_ key: String) throws(APIError) -> Int64? {
        switch values[key] {
        case nil, .null: return nil
        case .integer(let number): return number
        case .string(let text) where fromForm:
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { return nil }
            guard let number = Int64(trimmed) else { throw .malformed("\(key) must be a whole number") }
            return number
        default: throw .malformed("\(key) must be a whole number")
        }
    }

    /// true/false; from a form also 1/0, on/off, yes/no.
    func bool(_ key: String) throws(APIError) -> Bool? {
        switch values[key] {
        case nil, .null: return nil
        case .bool(let flag): return flag
        case .string(let text) where fromForm:
            switch text.lowercased() {
            case "true", "1", "on", "yes": return true
            case "false", "0", "off", "no", "": return false
            default: throw .malformed("\(key) must be true or false")
            }
        default: throw .malformed("\(key) must be true or false")
        }
    }

    /// The fields in a canonical text (sorted), for telling two requests apart.
    var fingerprint: String {
        values.keys.sorted().map { "\($0)=\(String(describing: values[$0]!))" }.joined(separator: "\n")
    }

    private static func formValues(_ pairs: [(String, String)]) -> [String: Value] {
        var values: [String: Value] = [:]
        for (name, value) in pairs where values[name] == nil { values[name] = .string(value) }
        return values
    }

    private static func jsonValues(_ body: [UInt8]) throws(APIError) -> [String: Value] {
        guard let object = try? JSONDecoder().decode([String: JSONScalar].self, from: Data(body)) else {
            throw .malformed("the body must be a JSON object")
        }
        return object.mapValues(\.value)
    }

    /// One JSON value, kept exact: `JSONSerialization` blurs booleans and numbers.
    private struct JSONScalar: Decodable {
        let value: Value

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { value = .null }
            else if let flag = try? container.decode(Bool.self) { value = .bool(flag) }
            else if let number = try? container.decode(Int64.self) { value = .integer(number) }
            else if let text = try? container.decode(String.self) { value = .string(text) }
            else { value = .other }
        }
    }
}
