import Foundation
import HTTP

/// Reads a request's body into a `Decodable` value, whichever way it came: JSON, an
/// urlencoded form, or a multipart form's text fields (form values are strings). Malformed
/// bodies and wrong types are 400; a body type the route does not take is 415. Required
/// fields are the handler's to check (422): decode them as optionals.
enum RequestFields {
    static func decode<Fields: Decodable>(_ type: Fields.Type, from request: Request) throws(APIError) -> Fields {
        let json: Data
        if let form = request.form {
            json = try object(from: form.fields.map { ($0.name, $0.value) })
        } else {
            switch mediaType(of: request) {
            case "application/json":
                json = Data(try RequestBody.json(request))
            case "application/x-www-form-urlencoded":
                json = try object(from: try RequestBody.formFields(request).map { ($0.name, $0.value) })
            case "" where request.body.isEmpty:
                json = Data("{}".utf8)
            default:
                throw APIError(.unsupportedMedia, "send application/json or a form")
            }
        }
        do {
            return try JSONDecoder().decode(Fields.self, from: json)
        } catch let error as DecodingError {
            throw .malformed(describe(error))
        } catch {
            throw .malformed("malformed JSON body")
        }
    }

    /// `application/json` from `application/json; charset=utf-8`, lowercased; "" if absent.
    static func mediaType(of request: Request) -> String {
        let value = request.headers["Content-Type"] ?? ""
        let type = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        return type.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// Form fields as a JSON object of strings; the first value of a repeated name wins.
    private static func object(from pairs: [(String, String)]) throws(APIError) -> Data {
        var fields: [String: String] = [:]
        for (name, value) in pairs where fields[name] == nil { fields[name] = value }
        guard let data = try? JSONSerialization.data(withJSONObject: fields) else { throw .malformed("malformed form") }
        return data
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            let field = context.codingPath.map(\.stringValue).joined(separator: ".")
            return field.isEmpty ? "the body must be a JSON object" : "\(field) has the wrong type"
        case .keyNotFound(let key, _):
            return "\(key.stringValue) is missing"
        default:
            return "malformed JSON body"
        }
    }
}
