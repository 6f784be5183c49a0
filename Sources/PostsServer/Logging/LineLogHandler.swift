import Foundation
import HTTP
import Logging
import Synchronization

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
        let level = event.level, message = event.message
        var fields = self.metadata
        if let explicit = event.metadata { fields.merge(explicit) { $1 } }
        if let error = event.error { fields["error"] = "\(error)" }
        let time = Timestamp.now()
        var out: [UInt8]
        switch format {
        case .text:
            var text = "\(time) \(level) \(message)"
            for key in fields.keys.sorted() { text += " \(key)=\(fields[key]!)" }
            out = Array(text.utf8)
        case .json:
            out = Array(#"{"time":"#.utf8)
            JSONText.appendQuoted(time, to: &out)
            out += Array(#","level":"#.utf8)
            JSONText.appendQuoted("\(level)", to: &out)
            out += Array(#","message":"#.utf8)
            JSONText.appendQuoted("\(message)", to: &out)
            for key in fields.keys.sorted() {
                out.append(UInt8(ascii: ","))
                JSONText.appendQuoted(key, to: &out)
                out.append(UInt8(ascii: ":"))
                JSONText.appendQuoted("\(fields[key]!)", to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "\n"))
        StandardOutput.write(out)
    }
}

/// One `write(2)` per line, under a lock so that lines from different threads never interleave.
enum StandardOutput {
    private static let lock = Mutex(())

    static func write(_ bytes: [UInt8]) {
        lock.withLock { _ in
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
}
