import HTTP
import Postgres

/// A JSON object written straight into bytes, fields in the order they are added. Answers
/// are built this way rather than through `JSONEncoder`, which costs more than the query
/// behind a page of posts.
struct JSONObject: Sendable {
    private(set) var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var isEmpty = true

    init() {}

    /// `{"status":"success"` and whatever is added after it: API.md's success envelope.
    static func success() -> JSONObject {
        var object = JSONObject()
        object.add("status", "success")
        return object
    }

    mutating func add(_ key: String, _ value: String?) {
        appendKey(key)
        if let value { JSONText.appendQuoted(value, to: &bytes) } else { appendNull() }
    }

    mutating func add(_ key: String, _ value: Int64?) {
        appendKey(key)
        if let value { bytes += String(value).utf8 } else { appendNull() }
    }

    mutating func add(_ key: String, _ value: Int) {
        add(key, Int64(value))
    }

    /// A finite number as JSON writes it (`Double`'s shortest form: `1.5`, `-3600.0`); null
    /// for nil or a value JSON cannot hold.
    mutating func add(_ key: String, _ value: Double?) {
        appendKey(key)
        if let value, value.isFinite { bytes += String(value).utf8 } else { appendNull() }
    }

    mutating func add(_ key: String, _ value: Bool) {
        appendKey(key)
        bytes += (value ? "true" : "false").utf8
    }

    /// A time in API.md's format (RFC 3339, UTC, milliseconds).
    mutating func add(_ key: String, _ value: PostgresTimestamp?) {
        add(key, value.map { Timestamp.format(millisecondsSince1970: $0.millisecondsSince1970) })
    }

    mutating func add(_ key: String, _ object: JSONObject) {
        appendKey(key)
        bytes += object.finished
    }

    /// A value already written as JSON (a post from `PostRows`, a page of them).
    mutating func addRaw(_ key: String, _ json: [UInt8]) {
        appendKey(key)
        bytes += json
    }

    mutating func add(_ key: String, _ objects: [JSONObject]) {
        appendArray(key, objects) { $1 += $0.finished }
    }

    mutating func add(_ key: String, _ strings: [String]) {
        appendArray(key, strings) { JSONText.appendQuoted($0, to: &$1) }
    }

    /// The object's bytes, closed.
    var finished: [UInt8] { bytes + [UInt8(ascii: "}")] }

    /// A 200 (or `status`) answer with this object as its body.
    func response(status: HTTPStatus = .ok) -> Response {
        Response.json(finished, status: status)
    }

    private mutating func appendKey(_ key: String) {
        if !isEmpty { bytes.append(UInt8(ascii: ",")) }
        isEmpty = false
        JSONText.appendQuoted(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    private mutating func appendArray<Element>(_ key: String, _ elements: [Element],
                                                _ append: (Element, inout [UInt8]) -> Void) {
        appendKey(key)
        bytes.append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            append(element, &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    private mutating func appendNull() {
        bytes += "null".utf8
    }
}
