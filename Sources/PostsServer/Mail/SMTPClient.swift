import CLibCurl
import Foundation
import Synchronization

/// Hands messages to the relay through libcurl's SMTP: the protocol, STARTTLS, implicit
/// TLS, AUTH (PLAIN, LOGIN, whatever the relay offers) and certificate checks are all
/// libcurl's. One easy handle, used by one thread at a time (the mailer's): libcurl keeps
/// its connection open between messages, so a burst costs one TLS handshake.
final class SMTPClient {
    private let settings: MailSettings
    private let handle: UnsafeMutableRawPointer
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    /// Set by `cancel()` from another thread: the transfer in progress ends at its next
    /// progress report (within about a second), so a stop never waits for a slow relay.
    private let cancelled: Cancellation

    final class Cancellation: Sendable {
        let flag = Atomic<Bool>(false)
    }

    private static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(settings: MailSettings, cancellation: Cancellation) throws {
        guard Self.initialized, let handle = curl_easy_init() else {
            throw Failure(description: "libcurl could not be initialised")
        }
        self.settings = settings
        self.handle = handle
        self.cancelled = cancellation
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// Sends one message to one recipient; `.delivered` only after the relay's 250 to the
    /// final dot.
    func send(_ message: MailMessage) -> SMTPOutcome {
        let upload = Upload(bytes: message.rendered)
        let recipients = curl_slist_append(nil, "<\(message.to)>")
        defer { curl_slist_free_all(recipients) }
        errorBuffer[0] = 0
        let context = Unmanaged.passUnretained(upload).toOpaque()
        let cancelContext = Unmanaged.passUnretained(cancelled).toOpaque()
        var setup = configure()
        setup = setup && posts_curl_setopt_string(handle, CURLOPT_MAIL_FROM, "<\(settings.from.address)>") == CURLE_OK
        setup = setup && posts_curl_setopt_slist(handle, CURLOPT_MAIL_RCPT, recipients) == CURLE_OK
        setup = setup && posts_curl_setopt_pointer(handle, CURLOPT_READDATA, context) == CURLE_OK
        setup = setup && posts_curl_setopt_pointer(handle, CURLOPT_XFERINFODATA, cancelContext) == CURLE_OK
        guard setup else { return .retry("libcurl refused an option (is it built with SMTP and TLS?)") }
        let code = withExtendedLifetime(upload) { curl_easy_perform(handle) }
        var reply = 0
        _ = posts_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &reply)
        let detail = errorBuffer[0] != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
        return SMTPOutcome.classify(curlCode: Int(code.rawValue), replyCode: reply, message: detail,
                                    cancelled: cancelled.flag.load(ordering: .relaxed))
    }

    /// The options that are the same for every message (set again each time: cheap, and a
    /// handle never carries one message's pointers into the next).
    private func configure() -> Bool {
        var ok = true
        func set(_ option: CURLoption, _ value: Int) { ok = ok && posts_curl_setopt_long(handle, option, value) == CURLE_OK }
        func set(_ option: CURLoption, _ value: String) { ok = ok && posts_curl_setopt_string(handle, option, value) == CURLE_OK }
        set(CURLOPT_URL, settings.connectURL)
        // Threads: no SIGALRM for DNS timeouts (libcurl's signal handling is process-wide).
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_UPLOAD, 1)
        set(CURLOPT_CONNECTTIMEOUT, 10)
        set(CURLOPT_TIMEOUT, 30)
        set(CURLOPT_NOPROGRESS, 0)
        // STARTTLS is required, never optional: a relay that does not offer it gets nothing.
        set(CURLOPT_USE_SSL, Int(settings.security == .none ? CURLUSESSL_NONE.rawValue : CURLUSESSL_ALL.rawValue))
        if let username = settings.username { set(CURLOPT_USERNAME, username) }
        if let password = settings.password { set(CURLOPT_PASSWORD, password) }
        if let caFile = settings.caFile { set(CURLOPT_CAINFO, caFile) }
        ok = ok && posts_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer) == CURLE_OK
        ok = ok && posts_curl_setopt_read_function(handle) { buffer, size, count, context in
            guard let buffer, let context else { return 0 }
            return Unmanaged<Upload>.fromOpaque(context).takeUnretainedValue().read(into: buffer, capacity: size * count)
        } == CURLE_OK
        ok = ok && posts_curl_setopt_progress_function(handle) { context, _, _, _, _ in
            guard let context else { return 0 }
            return Unmanaged<Cancellation>.fromOpaque(context).takeUnretainedValue().flag.load(ordering: .relaxed) ? 1 : 0
        } == CURLE_OK
        return ok
    }

    /// The message's bytes, read by libcurl in pieces.
    private final class Upload {
        let bytes: [UInt8]
        var offset = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
            let count = min(capacity, bytes.count - offset)
            bytes.withUnsafeBytes { source in
                UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + offset, byteCount: count)
            }
            offset += count
            return count
        }
    }
}
