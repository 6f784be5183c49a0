import CLibCurl
import Foundation
import HTTP

/// Many HTTPS requests at once through libcurl's multi interface, for the push services
/// and federation's deliveries and fetches:
/// HTTP/2 where the server speaks it (they all do), every request to one origin a stream
/// of one connection (`CURLMOPT_MAX_HOST_CONNECTIONS` 1, `CURLOPT_PIPEWAIT`), and that
/// connection kept between batches in the multi handle's cache. Used by one thread at a
/// time (a job handler's); TLS and its certificate checks are libcurl's.
final class CurlMultiplexer {
    struct Request {
        var url: String
        var headers: [String]
        var body: [UInt8]
        /// Refuse a peer at a private, loopback or link-local address: checked on the address
        /// a socket is about to be opened for, so a name that resolves there is refused too,
        /// before any packet reaches it.
        var publicPeersOnly = false
        /// A GET (no body) rather than a POST.
        var isGet = false
        /// The schemes allowed (`"https"`, `"http,https"`).
        var protocols = "https"
        /// An answer's body beyond this is cut (`Response.cutShort`).
        var maxResponseBytes = CurlMultiplexer.maxResponseBytes
    }

    struct Response {
        /// libcurl's code (0 when the exchange completed, whatever its status).
        let code: Int
        let status: Int
        let message: String
        let body: [UInt8]
        let retryAfter: String?
        /// Whether the peer was refused for its address.
        let refusedPeer: Bool
        /// A redirect's target, and the answer's media type.
        var location: String? = nil
        var contentType: String? = nil
        /// Whether the body was longer than the request allowed (the transfer was cut).
        var cutShort = false

        var completed: Bool { code == 0 }
    }

    /// An answer's body beyond this is cut (push services answer a few hundred bytes).
    static let maxResponseBytes = 64 * 1024

    private let multi: UnsafeMutableRawPointer
    private let cancellation: CurlTransfer.Cancellation
    private let trustedCertificates: [UInt8]?
    private var idle: [CurlTransfer] = []

    /// `trustedCertificates`: PEM to trust instead of libcurl's bundle (that bundle with
    /// `PUSH_CA_FILE`'s certificates added).
    init(trustedCertificates: [UInt8]?, cancellation: CurlTransfer.Cancellation) throws {
        _ = try CurlTransfer(cancellation: cancellation) // libcurl's global set-up, once
        guard let multi = curl_multi_init() else { throw CurlTransfer.Failure(description: "libcurl has no multi handle") }
        self.multi = multi
        self.cancellation = cancellation
        self.trustedCertificates = trustedCertificates
        _ = posts_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        _ = posts_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, 1)
        // As many streams at once as a batch has (APNs allows about a thousand; a server's
        // own SETTINGS_MAX_CONCURRENT_STREAMS still bounds it).
        _ = posts_curl_multi_setopt_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 1000)
    }

    deinit {
        idle.removeAll()
        curl_multi_cleanup(multi)
    }

    /// Whether libcurl here was built with HTTP/2 (nghttp2); APNs speaks nothing else.
    static var supportsHTTP2: Bool { posts_curl_supports_http2() != 0 }

    /// `PUSH_CA_FILE`'s certificates added to the ones libcurl trusts by default.
    static func bundle(adding extra: [UInt8]) -> [UInt8] {
        var path = [CChar](repeating: 0, count: 4096)
        posts_curl_default_ca_file(&path, path.count)
        let defaultPath = String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let defaults = defaultPath.isEmpty ? nil : FileManager.default.contents(atPath: defaultPath)
        return [UInt8](defaults ?? Data()) + [UInt8(ascii: "\n")] + extra
    }

    /// Runs the requests at once and answers each, in their order. Returns when every one
    /// has an answer or has failed (each has its own timeout), or soon after a stop.
    func perform(_ requests: [Request], connectTimeoutSeconds: Int = 5, timeoutSeconds: Int = 15) -> [Response] {
        var slots: [Slot?] = []
        for request in requests {
            guard let transfer = idle.popLast() ?? (try? CurlTransfer(cancellation: cancellation)) else {
                slots.append(nil)
                continue
            }
            var slot = Slot(transfer: transfer, body: CurlTransfer.BoundedBody(limit: request.maxResponseBytes),
                            peer: request.publicPeersOnly ? PeerCheck() : nil)
            for line in request.headers + ["Expect:"] { slot.headers = curl_slist_append(slot.headers, line) }
            slot.added = configure(transfer, for: request, body: slot.body, headers: slot.headers, peer: slot.peer,
                                   connectTimeout: connectTimeoutSeconds, timeout: timeoutSeconds)
                && curl_multi_add_handle(multi, transfer.handle) == CURLM_OK
            slots.append(slot)
        }
        let codes = run(added: slots.filter { $0?.added == true }.count)
        return slots.map { slot in
            guard let slot else { return Self.failure("libcurl could not make a handle") }
            defer {
                curl_slist_free_all(slot.headers)
                idle.append(slot.transfer)
            }
            guard slot.added else { return Self.failure("libcurl refused an option") }
            curl_multi_remove_handle(multi, slot.transfer.handle)
            let code = codes[slot.transfer.handle] ?? Int(CURLE_ABORTED_BY_CALLBACK.rawValue)
            let result = slot.transfer.result(of: code)
            let retryAfter = posts_curl_response_header(slot.transfer.handle, "retry-after").map { String(cString: $0) }
            let header = { (name: String) in posts_curl_response_header(slot.transfer.handle, name).map { String(cString: $0) } }
            return Response(code: code, status: result.responseCode, message: result.message, body: slot.body.kept,
                            retryAfter: retryAfter, refusedPeer: slot.peer?.refused ?? false,
                            location: header("location"), contentType: header("content-type"), cutShort: slot.body.cutShort)
        }
    }

    /// One request's handle and what lives as long as its transfer.
    private struct Slot {
        let transfer: CurlTransfer
        let body: CurlTransfer.BoundedBody
        let peer: PeerCheck?
        var headers: UnsafeMutablePointer<curl_slist>?
        var added = false

        init(transfer: CurlTransfer, body: CurlTransfer.BoundedBody, peer: PeerCheck?) {
            self.transfer = transfer
            self.body = body
            self.peer = peer
        }
    }

    private static func failure(_ message: String) -> Response {
        Response(code: -1, status: 0, message: message, body: [], retryAfter: nil, refusedPeer: false)
    }

    /// Drives the transfers until each is done; their libcurl codes by handle.
    private func run(added: Int) -> [UnsafeMutableRawPointer: Int] {
        var codes: [UnsafeMutableRawPointer: Int] = [:]
        var running = Int32(added)
        while running > 0 {
            guard curl_multi_perform(multi, &running) == CURLM_OK else { break }
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                if message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle {
                    codes[handle] = Int(message.pointee.data.result.rawValue)
                }
            }
            guard running > 0 else { break }
            // Woken by the sockets; the timeout only bounds how late a stop is seen (the
            // progress callbacks end the transfers then).
            guard curl_multi_poll(multi, nil, 0, 200, nil) == CURLM_OK else { break }
        }
        return codes
    }

    private func configure(_ transfer: CurlTransfer, for request: Request, body: CurlTransfer.BoundedBody,
                           headers: UnsafeMutablePointer<curl_slist>?, peer: PeerCheck?, connectTimeout: Int, timeout: Int) -> Bool {
        curl_easy_reset(transfer.handle)
        var ok = transfer.setShared(connectTimeoutSeconds: connectTimeout, timeoutSeconds: timeout)
        func set(_ option: CURLoption, _ value: Int) { ok = ok && transfer.set(option, value) }
        ok = ok && transfer.setRequest(url: request.url, protocols: request.protocols)
        set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        // Wait for the connection being made rather than open a second one beside it.
        set(CURLOPT_PIPEWAIT, 1)
        ok = ok && posts_curl_setopt_slist(transfer.handle, CURLOPT_HTTPHEADER, headers) == CURLE_OK
        if request.isGet {
            set(CURLOPT_HTTPGET, 1)
        } else {
            set(CURLOPT_POSTFIELDSIZE, request.body.count)
            // Copied by libcurl: the transfer outlives this call. (A body is never empty here.)
            ok = ok && (request.body.isEmpty ? [0] : request.body).withUnsafeBytes { bytes in
                transfer.set(CURLOPT_COPYPOSTFIELDS, pointer: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            }
        }
        if let trustedCertificates {
            ok = ok && trustedCertificates.withUnsafeBytes { posts_curl_setopt_ca_blob(transfer.handle, $0.baseAddress, $0.count) } == CURLE_OK
        }
        if let peer {
            ok = ok && posts_curl_setopt_socket_guard(transfer.handle, peer.socketGuard) == CURLE_OK
        }
        return ok && transfer.collect(into: body)
    }

    /// Refuses the sockets of one transfer to addresses that are not globally routable, before
    /// they are opened (`posts_curl_open_checked_socket`), and remembers that it did.
    private final class PeerCheck {
        var refused = false
        let socketGuard: UnsafeMutablePointer<posts_curl_socket_guard>

        init() {
            socketGuard = .allocate(capacity: 1)
            socketGuard.initialize(to: posts_curl_socket_guard(allowed: { context, address in
                guard let context, let address else { return 0 }
                let check = Unmanaged<PeerCheck>.fromOpaque(context).takeUnretainedValue()
                guard let peer = IPAddress(String(cString: address)), peer.isGloballyRoutable else {
                    check.refused = true
                    return 0
                }
                return 1
            }, context: nil))
            socketGuard.pointee.context = Unmanaged.passUnretained(self).toOpaque()
        }

        deinit {
            socketGuard.deallocate()
        }
    }
}
