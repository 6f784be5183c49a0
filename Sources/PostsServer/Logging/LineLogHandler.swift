import Foundation
import HTTP
import Logging
import Locking

/// Writes each log event as one line on standard output, at once (no stdio buffering, so
/// a pipe or a file sees it as it happens): `text` for people, `json` for collectors.
public struct LineLogHandler: LogHandler {
    public enum Format: String, Sendable, CaseIterable {
        case text, json
    }

    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let format: Format

    public init(label: String, format: Format) {
        self.label = label
        self.format = format
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = metadata
        if let explicit = event.metadata { fields.merge(explicit) { $1 } }
        if let error = event.error { fields["error"] = "\(error)" }
        let sorted = fields.keys.sorted().map { (key: $0, value: "\(fields[$0]!)") }
        StandardOutput.write(LogLine.make(format: format, level: "\(event.level)", message: "\(event.message)",
                                          fields: sorted))
    }
}

/// Standard output, written by one thread of its own. Loggers only append their line to a
/// buffer under a short lock (no system call while holding it, so request threads never
/// queue behind a slow terminal or pipe); the writer wakes at once and writes whatever has
/// gathered, so lines still appear as they happen, whole and in order.
public enum StandardOutput {
    private struct Pending {
        var bytes: [UInt8] = []
        var writing = false
    }

    private static let pending = ParkingLock(Pending())
    private static let wake = DispatchSemaphore(value: 0)
    private static let idle = DispatchSemaphore(value: 0)
    /// Starts the writer thread on first use.
    private static let writer: Void = {
        let thread = Thread { StandardOutput.drainForever() }
        thread.name = "log-writer"
        thread.start()
    }()

    static func write(_ line: [UInt8]) {
        _ = writer
        let wasEmpty = pending.withLock { state in
            let empty = state.bytes.isEmpty && !state.writing
            state.bytes += line
            return empty
        }
        if wasEmpty { wake.signal() }
    }

    /// Waits (up to two seconds) until every line logged so far is written: call before exiting.
    public static func flush() {
        _ = writer
        let deadline = DispatchTime.now() + 2
        while pending.withLock({ !$0.bytes.isEmpty || $0.writing }) && DispatchTime.now() < deadline {
            wake.signal()
            _ = idle.wait(timeout: .now() + .milliseconds(20))
        }
    }

    private static func drainForever() {
        while true {
            wake.wait()
            while true {
                // A moment's pause lets a busy server's lines gather into one write instead
                // of a wake-up and a system call per line; a line still appears within 1 ms.
                usleep(1_000)
                let batch: [UInt8] = pending.withLock { state in
                    defer { state.bytes = [] }
                    state.writing = !state.bytes.isEmpty
                    return state.bytes
                }
                if batch.isEmpty { break }
                writeAll(batch)
            }
            idle.signal()
        }
    }

    private static func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(1, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
