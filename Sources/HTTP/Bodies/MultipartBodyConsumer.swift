/// Takes a multipart/form-data body as it arrives: text fields are collected (within a
/// small budget), file parts go to temporary files in the upload directory (written by the
/// upload writers, off the connection's thread: `UploadWrites`), and
/// each file's first bytes are shown to `inspectFile` before any of it is written, so an
/// upload of the wrong kind is refused (415) on its first read, not after ten megabytes.
/// Memory held: the parser's buffer, the text fields and the write backlog, whatever the
/// files' size.
public struct MultipartBodyConsumer: BodyConsumer {
    public struct Policy: Sendable {
        /// Where file parts are written: the folder their final names will be in.
        public var directory: String
        /// The whole body (413 before it is read past).
        public var bodyLimit: Int
        /// Each file part (413 once a file grows past it).
        public var maxFileBytes: Int
        /// All text fields together.
        public var maxFieldBytes = 256 * 1024
        public var maxFiles = 4
        /// How many first bytes of a file `inspectFile` sees (fewer only if the file is shorter).
        public var inspectedPrefix = 16
        /// Looks at a file part's first bytes; throws to refuse the upload (415, say).
        public var inspectFile: @Sendable (MultipartPartHead, ArraySlice<UInt8>) throws(HTTPError) -> Void

        /// The sizes are the application's to choose: this module knows no upload limit.
        public init(directory: String, bodyLimit: Int, maxFileBytes: Int,
                    inspectFile: @escaping @Sendable (MultipartPartHead, ArraySlice<UInt8>) throws(HTTPError) -> Void) {
            self.directory = directory
            self.bodyLimit = bodyLimit
            self.maxFileBytes = maxFileBytes
            self.inspectFile = inspectFile
        }
    }

    private enum Part {
        case field(name: String, bytes: [UInt8])
        /// A file whose first bytes are still being gathered for inspection.
        case inspecting(MultipartPartHead, prefix: [UInt8])
        case file(MultipartPartHead, TemporaryUpload)
        /// An unchosen file input (`filename=""`): nothing is stored for it.
        case skipped
    }

    public var limit: Int { policy.bodyLimit }
    private let policy: Policy
    private var parser: MultipartParser
    private var part: Part?
    private var fields: [MultipartForm.Field] = []
    private var files: [UploadedFile] = []
    private var fieldBytes = 0
    /// The files' disk writes, made by the upload writers.
    private let writes = UploadWrites()

    /// How many bytes of file data may wait for the disk before the connection stops
    /// reading: part of what the body reserves from the body budget.
    static let writeBacklog = 256 * 1024

    /// The consumer for a request whose `Content-Type` is multipart/form-data with a
    /// valid boundary; 415 for another type, 400 for a multipart type without a boundary.
    public init(head: RequestHead, policy: Policy) throws(HTTPError) {
        let contentType = head.headers["Content-Type"] ?? ""
        guard let boundary = MultipartParser.boundary(fromContentType: contentType) else {
            if contentType.lowercased().hasPrefix("multipart/form-data") {
                throw .badRequest("multipart/form-data needs a valid boundary parameter")
            }
            throw HTTPError(.unsupportedMediaType, message: "this route takes multipart/form-data")
        }
        self.policy = policy
        parser = MultipartParser(boundary: boundary)
    }

    public mutating func prepare(declaredLength: Int?) -> Int {
        policy.maxFieldBytes + parser.limits.maxPartHeadBytes + 64 * 1024 + policy.inspectedPrefix + Self.writeBacklog
    }

    public mutating func isBehind(untilDone: Bool, wake: @escaping @Sendable () -> Void) -> Bool {
        writes.isBehind(limit: untilDone ? 0 : Self.writeBacklog, wake: wake)
    }

    public mutating func consume(_ piece: ArraySlice<UInt8>) throws(HTTPError) {
        parser.feed(piece)
        while true {
            switch try parser.next() {
            case .needMore, .end: return
            case .partHead(let head): try begin(head)
            case .partData(let data): try take(data)
            case .partEnd: try endPart()
            }
        }
    }

    public mutating func finish() throws(HTTPError) -> RequestBody {
        try parser.finish()
        if writes.hasFailed { throw TemporaryUpload.storeFailed }
        return .form(MultipartForm(fields: fields, files: files))
    }

    private mutating func begin(_ head: MultipartPartHead) throws(HTTPError) {
        guard let filename = head.filename else { return part = .field(name: head.name, bytes: []) }
        if filename.isEmpty { return part = .skipped }
        guard files.count < policy.maxFiles else {
            throw HTTPError(.payloadTooLarge, message: "at most \(policy.maxFiles) files per request")
        }
        part = .inspecting(head, prefix: [])
    }

    private mutating func take(_ data: ArraySlice<UInt8>) throws(HTTPError) {
        switch part {
        case .field(let name, var bytes):
            fieldBytes += data.count
            guard fieldBytes <= policy.maxFieldBytes else {
                throw HTTPError(.payloadTooLarge, message: "form fields are larger than \(policy.maxFieldBytes) bytes")
            }
            part = nil
            bytes += data
            part = .field(name: name, bytes: bytes)
        case .inspecting(let head, var prefix):
            part = nil
            prefix += data
            guard prefix.count >= policy.inspectedPrefix else { return part = .inspecting(head, prefix: prefix) }
            part = .file(head, try store(head, prefix: prefix))
        case .file(_, let upload):
            guard upload.size + data.count <= policy.maxFileBytes else { throw fileTooLarge() }
            try upload.write(data)
        case .skipped, nil:
            break
        }
    }

    private mutating func endPart() throws(HTTPError) {
        defer { part = nil }
        switch part {
        case .field(let name, let bytes):
            guard let value = String(validating: bytes, as: UTF8.self) else {
                throw .badRequest("form field \(name) is not UTF-8 text")
            }
            fields.append(MultipartForm.Field(name: name, value: value))
        case .inspecting(let head, let prefix):
            files.append(try store(head, prefix: prefix).complete(as: head))
        case .file(let head, let upload):
            files.append(try upload.complete(as: head))
        case .skipped, nil:
            break
        }
    }

    /// Shows the file's first bytes to the policy, then starts its temporary file with them.
    private func store(_ head: MultipartPartHead, prefix: [UInt8]) throws(HTTPError) -> TemporaryUpload {
        guard prefix.count <= policy.maxFileBytes else { throw fileTooLarge() }
        try policy.inspectFile(head, prefix.prefix(policy.inspectedPrefix))
        let upload = try TemporaryUpload(directory: policy.directory, writes: writes)
        try upload.write(prefix[...])
        return upload
    }

    private func fileTooLarge() -> HTTPError {
        HTTPError(.payloadTooLarge, message: "a file is larger than \(policy.maxFileBytes) bytes")
    }
}

extension BodyPolicy {
    /// multipart/form-data only, streamed by `MultipartBodyConsumer`.
    public static func multipart(_ policy: MultipartBodyConsumer.Policy) -> BodyPolicy {
        BodyPolicy { head throws(HTTPError) in try MultipartBodyConsumer(head: head, policy: policy) }
    }
}
