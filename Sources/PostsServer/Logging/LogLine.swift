import HTTP

/// One `key=value` of a log line. A number stays a JSON number in `json` lines, so a log
/// shipper can sum bytes or filter `status >= 500` without parsing strings.
struct LogField {
    let key: String
    let value: String
    let isNumber: Bool

    init(_ key: String, _ value: String, isNumber: Bool = false) {
        self.key = key
        self.value = value
        self.isNumber = isNumber
    }

    /// `value` must be the decimal text of a number.
    static func number(_ key: String, _ value: String) -> LogField {
        LogField(key, value, isNumber: true)
    }
}

/// The shape of one line of output, shared by the general log and the access log so that
/// both read alike: `TIME LEVEL MESSAGE key=value …`, or one JSON object.
enum LogLine {
    static func make(format: LineLogHandler.Format, level: String, message: String,
                     fields: [LogField]) -> [UInt8] {
        let time = Timestamp.now()
        var out: [UInt8] = []
        out.reserveCapacity(96 + fields.count * 24)
        switch format {
        case .text:
            out += time.utf8
            out.append(UInt8(ascii: " "))
            out += level.utf8
            out.append(UInt8(ascii: " "))
            out += message.utf8
            for field in fields {
                out.append(UInt8(ascii: " "))
                out += field.key.utf8
                out.append(UInt8(ascii: "="))
                out += field.value.utf8
            }
        case .json:
            out += #"{"time":"#.utf8
            JSONText.appendQuoted(time, to: &out)
            out += #","level":"#.utf8
            JSONText.appendQuoted(level, to: &out)
            out += #","message":"#.utf8
            JSONText.appendQuoted(message, to: &out)
            for field in fields {
                out.append(UInt8(ascii: ","))
                JSONText.appendQuoted(field.key, to: &out)
                out.append(UInt8(ascii: ":"))
                if field.isNumber {
                    out += field.value.utf8
                } else {
                    JSONText.appendQuoted(field.value, to: &out)
                }
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "\n"))
        return out
    }
}

/// The access log, written straight to standard output in the configured format: one
/// line per request, without a metadata dictionary per call.
public struct LineAccessLog: AccessLog {
    private let format: LineLogHandler.Format

    public init(format: LineLogHandler.Format) { self.format = format }

    public func record(_ entry: AccessLogEntry) {
        // Alphabetical, as the general log orders its metadata.
        StandardOutput.write(LogLine.make(format: format, level: "info", message: "request", fields: [
            .number("bytes", String(entry.bytes)),
            LogField("client", entry.client),
            .number("duration_ms", AccessLogEntry.milliseconds(entry.durationNanoseconds)),
            LogField("method", entry.method),
            LogField("path", String(entry.path)),
            LogField("request_id", entry.requestID),
            LogField("route", entry.route ?? "-"),
            .number("status", String(entry.status)),
        ]), format: format)
    }
}
