import CLibCurl
import Foundation

/// Hands messages to the relay through libcurl's SMTP: the protocol, STARTTLS, implicit
/// TLS, AUTH (PLAIN, LOGIN, whatever the relay offers) and certificate checks are all
/// libcurl's. One handle (`CurlTransfer`), kept open between messages, so a burst costs
/// one TLS handshake.
final class SMTPClient {
    private let settings: MailSettings
    private let transfer: CurlTransfer

    init(settings: MailSettings, cancellation: CurlTransfer.Cancellation) throws {
        self.settings = settings
        transfer = try CurlTransfer(cancellation: cancellation)
    }

    /// Sends one message to one recipient; `.delivered` only after the relay's 250 to the
    /// final dot.
    func send(_ message: MailMessage) -> SMTPOutcome {
        let upload = Upload(bytes: message.rendered)
        let recipients = curl_slist_append(nil, "<\(message.to)>")
        defer { curl_slist_free_all(recipients) }
        var setup = configure()
        setup = setup && transfer.set(CURLOPT_MAIL_FROM, "<\(settings.from.address)>")
        setup = setup && posts_curl_setopt_slist(transfer.handle, CURLOPT_MAIL_RCPT, recipients) == CURLE_OK
        setup = setup && transfer.set(CURLOPT_READDATA, pointer: Unmanaged.passUnretained(upload).toOpaque())
        guard setup else { return .retry("libcurl refused an option (is it built with SMTP and TLS?)") }
        let result = withExtendedLifetime(upload) { transfer.perform() }
        return SMTPOutcome.classify(curlCode: result.code, replyCode: result.responseCode, message: result.message,
                                    cancelled: transfer.cancellation.isSet)
    }

    /// The options that are the same for every message (set again each time: cheap, and a
    /// handle never carries one message's pointers into the next).
    private func configure() -> Bool {
        var ok = transfer.setShared(connectTimeoutSeconds: 10, timeoutSeconds: 30)
        func set(_ option: CURLoption, _ value: Int) { ok = ok && transfer.set(option, value) }
        func set(_ option: CURLoption, _ value: String) { ok = ok && transfer.set(option, value) }
        set(CURLOPT_URL, settings.connectURL)
        set(CURLOPT_UPLOAD, 1)
        // STARTTLS is required, never optional: a relay that does not offer it gets nothing.
        set(CURLOPT_USE_SSL, Int(settings.security == .none ? CURLUSESSL_NONE.rawValue : CURLUSESSL_ALL.rawValue))
        if let username = settings.username { set(CURLOPT_USERNAME, username) }
        if let password = settings.password { set(CURLOPT_PASSWORD, password) }
        if let caFile = settings.caFile { set(CURLOPT_CAINFO, caFile) }
        ok = ok && posts_curl_setopt_read_function(transfer.handle) { buffer, size, count, context in
            guard let buffer, let context else { return 0 }
            return Unmanaged<Upload>.fromOpaque(context).takeUnretainedValue().read(into: buffer, capacity: size * count)
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
