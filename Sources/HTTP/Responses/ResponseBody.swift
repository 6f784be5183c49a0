/// What follows a response's head.
public enum ResponseBody: Sendable {
    /// Bytes in memory, written with the head.
    case bytes([UInt8])
    /// An open file, sent with sendfile(2): no copy through user space.
    case file(FileBody)
    /// Written over time by a producer on any thread (chunked; SSE is a stream).
    case stream(ResponseStream)

    /// The `Content-Length`, or nil for a stream.
    var length: Int? {
        switch self {
        case .bytes(let bytes): bytes.count
        case .file(let file): file.length
        case .stream: nil
        }
    }

    public var inlineBytes: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }
}
