import CLibCurl
import Crypto
import Foundation

/// Posts pushes to `PUSH_WEBHOOK_URL` through libcurl's HTTP(S) (TLS and its certificate
/// checks are libcurl's). One handle (`CurlTransfer`), kept open between pushes, so a burst
/// costs one handshake.
final class PushWebhookClient {
    private let settings: PushSettings
    private let transfer: CurlTransfer

    /// The answer's first bytes go to the log; the answer is kept whole up to
    /// `maxResponseBytes` (a 410's list of invalid tokens), past which the transfer is cut
    /// (the status has arrived by then).
    static let keptResponseBytes = 200
    static let maxResponseBytes = 64 * 1024

    init(settings: PushSettings, cancellation: CurlTransfer.Cancellation) throws {
        self.settings = settings
        transfer = try CurlTransfer(cancellation: cancellation)
    }

    /// `sha256=` and the lowercase hex HMAC-SHA256 of exactly these bytes.
    static func signature(of body: [UInt8], secret: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Array(secret.utf8)))
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        for byte in code { hex += [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]] }
        return "sha256=" + String(decoding: hex, as: UTF8.self)
    }

    /// Posts one body; `.delivered` only on a 2xx answer.
    func post(_ body: [UInt8], deliveryID: String) -> PushOutcome {
        let response = CurlTransfer.BoundedBody(limit: Self.maxResponseBytes)
        // libcurl copies nothing from the list: it lives through the request.
        var list: UnsafeMutablePointer<curl_slist>?
        for line in [
            "Content-Type: application/json",
            "X-Posts-Signature: \(Self.signature(of: body, secret: settings.secret))",
            "X-Posts-Delivery: \(deliveryID)",
            // No 100-continue round trip for a large body: the receiver reads it or not.
            "Expect:",
        ] { list = curl_slist_append(list, line) }
        defer { curl_slist_free_all(list) }
        let result: CurlTransfer.Result = body.withUnsafeBytes { bytes in
            var ok = configure(response)
            ok = ok && posts_curl_setopt_slist(transfer.handle, CURLOPT_HTTPHEADER, list) == CURLE_OK
            ok = ok && transfer.set(CURLOPT_POSTFIELDSIZE, bytes.count)
            ok = ok && transfer.set(CURLOPT_POSTFIELDS, pointer: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            guard ok else { return CurlTransfer.Result(code: -1, responseCode: 0, message: "libcurl refused an option") }
            return withExtendedLifetime(response) { transfer.perform() }
        }
        return PushOutcome.classify(curlCode: result.code, status: result.responseCode, message: result.message,
                                    answer: response.kept,
                                    cutShort: response.cutShort, cancelled: transfer.cancellation.isSet)
    }

    /// The request's options, set again each time (cheap, and a handle never carries one
    /// request's pointers into the next).
    private func configure(_ response: CurlTransfer.BoundedBody) -> Bool {
        transfer.setShared(connectTimeoutSeconds: 5, timeoutSeconds: 10)
            && transfer.setRequest(url: settings.url, protocols: "http,https") && transfer.collect(into: response)
    }
}
