import CLibCurl
import Crypto
import Foundation
import Locking

/// S3's REST calls over libcurl, signed with AWS Signature V4 by libcurl itself
/// (`CURLOPT_AWS_SIGV4`). Bodies go between the network and files through callbacks, a
/// piece at a time: a 10 MiB image never sits in memory. libcurl handles are kept between
/// requests (each keeps its connection open), one per thread at a time.
final class S3Client: Sendable {
    struct Credentials: Sendable {
        let accessKeyID: String
        let secretAccessKey: String
    }

    /// What a request sends: nothing, or a file's bytes.
    enum Upload {
        case none
        case file(path: String, contentType: String)
    }

    /// Where the answer's body goes: memory (listings, errors; at most `maxXMLBytes`), or a
    /// file descriptor when the answer is a 200 (an error's XML goes to memory even then).
    enum Sink {
        case memory
        case file(Int32)
    }

    struct Answer {
        let status: Int
        let body: [UInt8]
    }

    static let maxXMLBytes = 1024 * 1024
    /// SHA-256 of nothing: the payload hash of every request without a body.
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    let location: S3Location
    private let credentials: Credentials
    private let idle = ParkingLock<[IdleHandle]>([])
    /// Never set: a stop lets requests in flight finish within their timeouts.
    private let cancellation = CurlTransfer.Cancellation()
    let metrics: StorageMetrics

    init(location: S3Location, credentials: Credentials, metrics: StorageMetrics) {
        self.location = location
        self.credentials = credentials
        self.metrics = metrics
    }

    /// One request. Answers 2xx, 304, 404 and 412 come back for the caller to read; a
    /// transport failure, a 5xx or a throttle is `.unavailable`, any other answer `.refused`.
    func perform(_ operation: StorageMetrics.Operation, _ method: String, key: String?, query: [(String, String)] = [],
                 headers: [String] = [], upload: Upload = .none, into sink: Sink = .memory,
                 timeoutSeconds: Int = 30) throws(StorageFailure) -> Answer {
        let started = ContinuousClock.now
        let outcome = Result { () throws(StorageFailure) -> Answer in
            try transfer(method, url: S3Request(location, key: key, query: query).url, headers: headers,
                         upload: upload, sink: sink, timeoutSeconds: timeoutSeconds)
        }
        metrics.record(operation, outcome, since: started)
        return try outcome.get()
    }

    private func transfer(_ method: String, url: String, headers: [String], upload: Upload, sink: Sink,
                          timeoutSeconds: Int) throws(StorageFailure) -> Answer {
        let transfer = try borrow()
        defer { giveBack(transfer) }
        curl_easy_reset(transfer.handle)
        var ok = transfer.setShared(connectTimeoutSeconds: 3, timeoutSeconds: timeoutSeconds)
        func set(_ option: CURLoption, _ value: Int) { ok = ok && transfer.set(option, value) }
        func set(_ option: CURLoption, _ value: String) { ok = ok && transfer.set(option, value) }
        set(CURLOPT_URL, url)
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        set(CURLOPT_FOLLOWLOCATION, 0)
        set(CURLOPT_USERAGENT, "posts-server")
        // A store that accepted the connection and then went silent: cut after 10 s without
        // a byte either way, not at the whole request's limit (a heavy-lane thread waits).
        set(CURLOPT_LOW_SPEED_LIMIT, 1)
        set(CURLOPT_LOW_SPEED_TIME, 10)
        set(CURLOPT_AWS_SIGV4, "aws:amz:\(location.region):s3")
        set(CURLOPT_USERNAME, credentials.accessKeyID)
        set(CURLOPT_PASSWORD, credentials.secretAccessKey)
        switch method {
        case "HEAD": set(CURLOPT_NOBODY, 1)
        case "GET": set(CURLOPT_HTTPGET, 1)
        default: set(CURLOPT_CUSTOMREQUEST, method)
        }

        var lines = headers
        let source: UploadSource?
        switch upload {
        case .none:
            source = nil
            lines.append("x-amz-content-sha256: \(Self.emptyPayloadHash)")
        case .file(let path, let contentType):
            let opened = try UploadSource(path: path)
            source = opened
            // libcurl signs the hash it is given: the libcurl here does not hash a body
            // read through a callback, and stores such as SeaweedFS refuse a request without it.
            // (No empty `Expect:` to skip 100-continue: libcurl 7.88 signs the header it then
            // leaves out, and the signature no longer matches.)
            lines += ["x-amz-content-sha256: \(opened.sha256)", "Content-Type: \(contentType)"]
            set(CURLOPT_UPLOAD, 1)
            set(CURLOPT_INFILESIZE_LARGE, opened.size)
            ok = ok && transfer.set(CURLOPT_READDATA, pointer: Unmanaged.passUnretained(opened).toOpaque())
            ok = ok && posts_curl_setopt_read_function(transfer.handle) { buffer, size, count, context in
                guard let buffer, let context else { return Int(CURL_READFUNC_ABORT) }
                return Unmanaged<UploadSource>.fromOpaque(context).takeUnretainedValue().read(into: buffer, size * count)
            } == CURLE_OK
        }
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines { list = curl_slist_append(list, line) }
        defer { curl_slist_free_all(list) }
        ok = ok && posts_curl_setopt_slist(transfer.handle, CURLOPT_HTTPHEADER, list) == CURLE_OK

        let receiver = Receiver(handle: transfer.handle, sink: sink)
        ok = ok && transfer.set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(receiver).toOpaque())
        ok = ok && posts_curl_setopt_write_function(transfer.handle) { data, size, count, context in
            guard let data, let context else { return 0 }
            return Unmanaged<Receiver>.fromOpaque(context).takeUnretainedValue().receive(data, count: size * count)
        } == CURLE_OK
        guard ok else { throw .unavailable("libcurl refused an option of \(method) \(url)") }

        let result = withExtendedLifetime((receiver, source)) { transfer.perform() }
        guard result.code == 0 else {
            if receiver.failed { throw .unavailable("\(method) \(url): the answer could not be kept (\(result.message))") }
            throw .unavailable("\(method) \(url): \(result.message)")
        }
        let status = result.responseCode
        switch status {
        case 200..<300, 304, 404, 412:
            return Answer(status: status, body: receiver.memory)
        case 429, 500...:
            throw .unavailable("\(method) \(url): HTTP \(status)\(Self.summary(of: receiver.memory))")
        default:
            throw .refused("\(method) \(url): HTTP \(status)\(Self.summary(of: receiver.memory))")
        }
    }

    /// `: Code: Message` of an error's body, or nothing (a HEAD's answer has no body).
    private static func summary(of body: [UInt8]) -> String {
        S3Response.errorSummary(body).map { ": " + $0 } ?? ""
    }

    private func borrow() throws(StorageFailure) -> CurlTransfer {
        if let kept = idle.withLock({ $0.popLast() }) { return kept.transfer }
        do {
            return try CurlTransfer(cancellation: cancellation)
        } catch {
            throw .unavailable("\(error)")
        }
    }

    private func giveBack(_ transfer: CurlTransfer) {
        idle.withLock { $0.append(IdleHandle(transfer: transfer)) }
    }

    /// A handle no thread uses, in the idle list: only the thread that takes it out touches it.
    private struct IdleHandle: @unchecked Sendable {
        let transfer: CurlTransfer
    }

    /// A file read into an upload: its size and SHA-256 first (one pass, 64 KiB at a time),
    /// then its bytes as libcurl asks for them.
    private final class UploadSource {
        let descriptor: Int32
        let size: Int
        let sha256: String

        init(path: String) throws(StorageFailure) {
            descriptor = Foundation.open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw .unavailable("cannot read \(path): \(String(cString: strerror(errno)))") }
            var hasher = SHA256()
            var total = 0
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)
            defer { buffer.deallocate() }
            while true {
                let count = Foundation.read(descriptor, buffer.baseAddress, buffer.count)
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else {
                    close(descriptor)
                    throw .unavailable("cannot read \(path): \(String(cString: strerror(errno)))")
                }
                if count == 0 { break }
                hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                total += count
            }
            size = total
            sha256 = hasher.finalize().map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
            lseek(descriptor, 0, SEEK_SET)
        }

        deinit { close(descriptor) }

        func read(into buffer: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
            while true {
                let read = Foundation.read(descriptor, buffer, count)
                if read < 0 && errno == EINTR { continue }
                return read < 0 ? Int(CURL_READFUNC_ABORT) : read
            }
        }
    }

    /// The answer's body: to the file when the answer is a 200 and a file was given,
    /// otherwise to memory up to `maxXMLBytes` (past it the transfer is cut).
    private final class Receiver {
        let handle: UnsafeMutableRawPointer
        let sink: Sink
        var memory: [UInt8] = []
        var failed = false

        init(handle: UnsafeMutableRawPointer, sink: Sink) {
            self.handle = handle
            self.sink = sink
        }

        func receive(_ data: UnsafeMutablePointer<CChar>, count: Int) -> Int {
            var status = 0
            _ = posts_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
            if case .file(let descriptor) = sink, status == 200 {
                var written = 0
                while written < count {
                    let result = write(descriptor, data + written, count - written)
                    if result < 0 && errno == EINTR { continue }
                    guard result > 0 else {
                        failed = true
                        return 0
                    }
                    written += result
                }
                return count
            }
            guard memory.count + count <= S3Client.maxXMLBytes else {
                failed = true
                return 0
            }
            data.withMemoryRebound(to: UInt8.self, capacity: count) { memory.append(contentsOf: UnsafeBufferPointer(start: $0, count: count)) }
            return count
        }
    }
}
