/// Where stored images and their sizes are kept, by name (`StoredImageName`'s): a folder
/// (`FileObjectStore`) or an S3-compatible bucket (`S3ObjectStore`). Every call may block
/// (the network, the disk): callers run on a worker or a background thread, never on an
/// event loop, and hold no database connection while they wait.
protocol ObjectStore: Sendable {
    /// Writes the file at `path` (a made image in the upload folder, left there for the
    /// caller) as `name`. With `ifAbsent`, an object already there is kept and the answer
    /// is false: how a size is made once across instances.
    @discardableResult
    func put(_ name: String, from path: String, contentType: String, ifAbsent: Bool) throws(StorageFailure) -> Bool

    /// The object as a local file, to open for sending; nil when there is none. `scratch` is
    /// a path in the upload folder a store may fetch it to first (the reader removes it once
    /// open: `ObjectFile.opened`).
    func open(_ name: String, scratch: String) throws(StorageFailure) -> ObjectFile?

    /// Runs `body` with a local file holding the object (the store's own file, or a copy
    /// fetched to `scratch` and removed after); nil when there is no such object.
    func withLocalCopy<T>(of name: String, scratch: String, _ body: (String) throws -> T) throws -> T?

    /// Whether there is an object of that name (a HEAD: no bytes move).
    func exists(_ name: String) throws(StorageFailure) -> Bool

    /// Removes the objects; absent ones are no error.
    func delete(_ names: [String]) throws(StorageFailure)

    /// Names in the store after `marker` (nil: from the start), in a page of a store's
    /// choosing; the next page's marker is the answer's `next` (nil: the end).
    func list(after marker: String?) throws(StorageFailure) -> (names: [String], next: String?)

    /// Whether the store answers and lets us in: a cheap request.
    func probe() throws(StorageFailure)

    /// Where `S3_PUBLIC_URL` sends a client for this object, if the operator set one.
    func publicURL(of name: String) -> String?

    /// Whether `open` and `withLocalCopy` read a local file in place (fast enough for a
    /// request's standard lane) rather than over the network (the heavy lane's work).
    var isLocal: Bool { get }
}

/// Why a store could not do what was asked. Either way the client gets 503 with
/// `Retry-After`: an outage passes, and refused credentials are the operator's to fix.
enum StorageFailure: Error, CustomStringConvertible {
    /// Not reachable, timed out, or answering 5xx/throttled.
    case unavailable(String)
    /// Answered, and refused: credentials, permissions, a bucket that does not exist.
    case refused(String)

    var description: String {
        switch self {
        case .unavailable(let reason): "the object store is unavailable: \(reason)"
        case .refused(let reason): "the object store refused the request: \(reason)"
        }
    }

    var apiError: APIError {
        APIError(.unavailable, "image storage is unavailable; try again shortly", retryAfter: 5)
    }
}
