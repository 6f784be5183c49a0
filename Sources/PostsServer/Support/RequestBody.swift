import Foundation
import HTTP

/// The two text bodies a route reads fields from, checked once for both readers
/// (`BodyFields`, `RequestFields`) so that a body that cannot be read says why, not which
/// field happened to hold the damage.
enum RequestBody {
    /// A JSON body's bytes. JSON is UTF-8 (RFC 8259 §8.1, API.md): bytes that are not are
    /// 400 as such, where a decoder would only find the first string holding them "not a
    /// string" ("title must be a string").
    static func json(_ request: Request) throws(APIError) -> [UInt8] {
        guard String(validating: request.body, as: UTF8.self) != nil else {
            throw .malformed("the body is not valid UTF-8")
        }
        return request.body
    }

    /// An urlencoded form's fields, in order. `curl -d '{"title":…}'` without
    /// `-H 'Content-Type: application/json'` sends JSON labelled as a form, whose one
    /// nameless field would answer "title is required": a form body that is one JSON object
    /// is 400, saying how to send it.
    static func formFields(_ request: Request) throws(APIError) -> [(name: String, value: String)] {
        let text = String(decoding: request.body, as: UTF8.self)
        if isJSONObject(text) {
            throw .malformed("the body is a JSON object sent as a form: send it with Content-Type: application/json")
        }
        guard let query = QueryParameters(parsing: text) else { throw .malformed("malformed form body") }
        return query.pairs.map { ($0.name, $0.value) }
    }

    private static func isJSONObject(_ text: String) -> Bool {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("{") else { return false }
        return (try? JSONSerialization.jsonObject(with: Data(trimmed.utf8))) is [String: Any]
    }
}
