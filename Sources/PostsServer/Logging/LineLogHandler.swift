import Foundation
import HTTP
import Logging

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
        let sorted = fields.keys.sorted().map { LogField($0, "\(fields[$0]!)") }
        StandardOutput.write(LogLine.make(format: format, level: "\(event.level)", message: "\(event.message)",
                                          fields: sorted), format: format)
    }
}
