import CLibCurl
import Synchronization

/// One libcurl easy handle, used by one thread at a time (the mailer's, the push sender's):
/// libcurl keeps its connection open between transfers, so a burst costs one handshake.
/// What every transfer of ours shares is set here: no signals, libcurl's words for a
/// failure, and an end within about a second once `Cancellation` is set. The protocol's
/// options are its user's, set again before each transfer.
final class CurlTransfer {
    let handle: UnsafeMutableRawPointer
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    let cancellation: Cancellation

    /// Set from another thread (a stop): the transfer in progress ends at its next progress
    /// report, so a stop never waits for a slow peer.
    final class Cancellation: Sendable {
        let flag = Atomic<Bool>(false)

        init() {}

        var isSet: Bool { flag.load(ordering: .relaxed) }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// What came of `perform`: libcurl's code, the last status or reply code it saw (0 for
    /// none) and its words for a failure.
    struct Result {
        let code: Int
        let responseCode: Int
        let message: String
    }

    private static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

    init(cancellation: Cancellation) throws {
        guard Self.initialized, let handle = curl_easy_init() else {
            throw Failure(description: "libcurl could not be initialised")
        }
        self.handle = handle
        self.cancellation = cancellation
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    func set(_ option: CURLoption, _ value: Int) -> Bool { posts_curl_setopt_long(handle, option, value) == CURLE_OK }
    func set(_ option: CURLoption, _ value: String) -> Bool { posts_curl_setopt_string(handle, option, value) == CURLE_OK }
    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) -> Bool {
        posts_curl_setopt_pointer(handle, option, pointer) == CURLE_OK
    }

    /// The options every transfer has; false when libcurl refused one.
    func setShared(connectTimeoutSeconds: Int, timeoutSeconds: Int) -> Bool {
        errorBuffer[0] = 0
        // Threads: no SIGALRM for DNS timeouts (libcurl's signal handling is process-wide).
        var ok = set(CURLOPT_NOSIGNAL, 1)
        ok = ok && set(CURLOPT_CONNECTTIMEOUT, connectTimeoutSeconds) && set(CURLOPT_TIMEOUT, timeoutSeconds)
        ok = ok && set(CURLOPT_NOPROGRESS, 0) && set(CURLOPT_ERRORBUFFER, pointer: errorBuffer)
        ok = ok && set(CURLOPT_XFERINFODATA, pointer: Unmanaged.passUnretained(cancellation).toOpaque())
        ok = ok && posts_curl_setopt_progress_function(handle) { context, _, _, _, _ in
            guard let context else { return 0 }
            return Unmanaged<Cancellation>.fromOpaque(context).takeUnretainedValue().isSet ? 1 : 0
        } == CURLE_OK
        return ok
    }

    /// A request of ours to `url`: only the `protocols` named (`"https"`, `"http,https"`),
    /// no redirects (a receiver cannot send our signed bodies elsewhere), our user agent.
    func setRequest(url: String, protocols: String) -> Bool {
        set(CURLOPT_URL, url) && set(CURLOPT_PROTOCOLS_STR, protocols) && set(CURLOPT_FOLLOWLOCATION, 0)
            && set(CURLOPT_USERAGENT, "posts-server")
    }

    /// Runs the transfer set up on the handle.
    func perform() -> Result {
        errorBuffer[0] = 0
        return result(of: Int(curl_easy_perform(handle).rawValue))
    }

    /// What came of the transfer that ended with libcurl's `code` (by `perform`, or driven
    /// by a multi handle, whose caller clears nothing: `setShared` cleared the words).
    func result(of code: Int) -> Result {
        var responseCode = 0
        _ = posts_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &responseCode)
        let message = errorBuffer[0] != 0 ? String(cString: errorBuffer)
            : String(cString: curl_easy_strerror(CURLcode(rawValue: UInt32(truncatingIfNeeded: code))))
        return Result(code: code, responseCode: responseCode, message: message)
    }
}

extension CurlTransfer {
    /// An answer's body kept up to `limit` bytes; past it the transfer is cut (`cutShort`).
    final class BoundedBody {
        let limit: Int
        private(set) var kept: [UInt8] = []
        private(set) var cutShort = false

        init(limit: Int) {
            self.limit = limit
        }

        fileprivate func receive(_ data: UnsafeMutablePointer<CChar>, count: Int) -> Int {
            guard kept.count + count <= limit else {
                cutShort = true
                return 0
            }
            kept += UnsafeRawBufferPointer(start: data, count: count)
            return count
        }
    }

    /// Collects the answer's body into `body`, which the caller keeps alive until `perform` returns.
    func collect(into body: BoundedBody) -> Bool {
        set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(body).toOpaque())
            && posts_curl_setopt_write_function(handle) { data, size, count, context in
                guard let data, let context else { return 0 }
                return Unmanaged<BoundedBody>.fromOpaque(context).takeUnretainedValue().receive(data, count: size * count)
            } == CURLE_OK
    }
}
