import Foundation

/// A `multipart/form-data` body (RFC 7578): text fields, then files. Built once per call, so
/// that a retry sends the very same bytes.
public struct MultipartForm: Sendable, Equatable {
    public struct File: Sendable, Equatable {
        public var fieldName: String
        public var filename: String
        public var contentType: String
        public var data: Data
    }

    public let boundary: String
    public private(set) var fields: [(name: String, value: String)] = []
    public private(set) var files: [File] = []

    public init(boundary: String = "PostsClient-\(UUID().uuidString)") {
        self.boundary = boundary
    }

    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    public mutating func append(_ value: String, named name: String) {
        fields.append((name, value))
    }

    public mutating func append(_ data: Data, named name: String, filename: String, contentType: String) {
        files.append(File(fieldName: name, filename: filename, contentType: contentType, data: data))
    }

    public var body: Data {
        var body = Data()
        for (name, value) in fields {
            body.append("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.quoted(name))\"\r\n\r\n")
            body.append(value)
            body.append("\r\n")
        }
        for file in files {
            body.append("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.quoted(file.fieldName))\"; "
                        + "filename=\"\(Self.quoted(file.filename))\"\r\nContent-Type: \(file.contentType)\r\n\r\n")
            body.append(file.data)
            body.append("\r\n")
        }
        body.append("--\(boundary)--\r\n")
        return body
    }

    /// RFC 7578 §4.2 / WHATWG: a quote and line breaks in a name are percent-encoded.
    private static func quoted(_ text: String) -> String {
        text.replacingOccurrences(of: "\"", with: "%22")
            .replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }

    public static func == (lhs: MultipartForm, rhs: MultipartForm) -> Bool {
        lhs.boundary == rhs.boundary && lhs.files == rhs.files
            && lhs.fields.map(\.name) == rhs.fields.map(\.name) && lhs.fields.map(\.value) == rhs.fields.map(\.value)
    }
}

extension Data {
    fileprivate mutating func append(_ text: String) {
        append(contentsOf: Array(text.utf8))
    }
}
