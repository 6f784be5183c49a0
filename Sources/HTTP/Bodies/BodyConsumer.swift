/// Where a request's body goes as it arrives, piece by piece, so that no body is ever held
/// whole unless its route wants it whole. A route picks one per request from the head
/// (`BodyPolicy`): JSON and forms collect up to their limit; multipart uploads stream their
/// files to disk. The connection that owns the request drives it, on whichever thread owns
/// the connection at the time.
public protocol BodyConsumer {
    /// The largest body accepted: a longer one is refused with 413 before it is read past.
    var limit: Int { get }

    /// Called once, before the first byte, with the body's declared length (nil when
    /// chunked). Returns the most memory the consumer will hold, which the server reserves
    /// from its body budget before it reads on.
    mutating func prepare(declaredLength: Int?) -> Int

    /// The next piece of the body. Throwing answers the request with that error at once
    /// (415 on an image's first bytes, say) and closes the connection.
    mutating func consume(_ piece: ArraySlice<UInt8>) throws(HTTPError)

    /// The body has ended: what the handler receives.
    mutating func finish() throws(HTTPError) -> RequestBody

    /// Whether work the consumer handed off this thread (an upload's disk writes) is too
    /// far behind: then the connection reads no more of the body until `wake` is called.
    /// `untilDone`: the body has ended, and `finish` must wait for all of that work.
    mutating func isBehind(untilDone: Bool, wake: @escaping @Sendable () -> Void) -> Bool
}

extension BodyConsumer {
    /// A consumer that does everything on the connection's thread is never behind.
    public mutating func isBehind(untilDone: Bool, wake: @escaping @Sendable () -> Void) -> Bool { false }
}

/// A request body as the handler receives it.
public enum RequestBody: Sendable {
    /// No body was sent, or the route takes none.
    case empty
    /// The whole body, collected (JSON, forms).
    case bytes([UInt8])
    /// A multipart form whose files were streamed to disk as they arrived.
    case form(MultipartForm)
}

/// Collects the body in memory, up to its limit: for JSON and urlencoded forms.
public struct CollectingBodyConsumer: BodyConsumer {
    public let limit: Int
    private var bytes: [UInt8] = []

    public init(limit: Int) { self.limit = limit }

    public mutating func prepare(declaredLength: Int?) -> Int {
        let expected = min(declaredLength ?? limit, limit)
        // A declared length is exact (the parser holds the client to it); chunked bodies
        // grow as they come, within the reservation of the whole limit.
        if declaredLength != nil { bytes.reserveCapacity(expected) }
        return expected
    }

    public mutating func consume(_ piece: ArraySlice<UInt8>) throws(HTTPError) {
        bytes.append(contentsOf: piece)
    }

    public mutating func finish() throws(HTTPError) -> RequestBody {
        .bytes(bytes)
    }
}
