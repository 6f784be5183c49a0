/// What a part of a multipart/form-data body says about itself (RFC 7578 §4.2–4.4).
public struct MultipartPartHead: Sendable, Equatable {
    /// The form field: `Content-Disposition`'s `name` parameter, never empty.
    public var name: String
    /// The `filename` parameter, present for a file field. It may be empty: browsers send
    /// `filename=""` with no content when the field's file was left unchosen.
    public var filename: String?
    /// The part's `Content-Type` as sent; nil means text/plain (RFC 7578 §4.4).
    public var contentType: String?
    /// Every header field of the part, in arrival order.
    public var headers: HTTPHeaders

    public init(
        name: String, filename: String? = nil, contentType: String? = nil, headers: HTTPHeaders = HTTPHeaders()
    ) {
        self.name = name
        self.filename = filename
        self.contentType = contentType
        self.headers = headers
    }

    /// The head described by a part's header fields. `filename*` (RFC 5987) is ignored:
    /// RFC 7578 §4.2 forbids senders to use it for form data.
    init(headers: HTTPHeaders) throws(HTTPError) {
        let dispositions = headers.values(of: "Content-Disposition")
        guard let disposition = dispositions.first else {
            throw .badRequest("multipart part has no Content-Disposition")
        }
        guard dispositions.count == 1 else { throw .badRequest("multipart part has two Content-Disposition fields") }
        guard let parsed = HeaderParameters(parsing: disposition) else {
            throw .badRequest("multipart part has a malformed Content-Disposition")
        }
        guard parsed.value.lowercased() == "form-data" else {
            throw .badRequest("multipart part's Content-Disposition is not form-data")
        }
        guard let name = parsed["name"], !name.isEmpty else { throw .badRequest("multipart part has no name") }
        let contentTypes = headers.values(of: "Content-Type")
        guard contentTypes.count <= 1 else { throw .badRequest("multipart part has two Content-Type fields") }
        self.init(name: name, filename: parsed["filename"], contentType: contentTypes.first, headers: headers)
    }
}
