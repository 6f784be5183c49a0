import Foundation

/// A client of `/api/events` (or another event stream): opens the stream, then reads it
/// event by event (chunks gathered until a blank line ends an event).
public final class EventStreamClient: @unchecked Sendable {
    public struct Event: Sendable, Equatable {
        public let id: String?
        public let type: String?
        public let data: String?
        /// The whole text, comment and retry lines included.
        public let text: String

        public var json: [String: Any] {
            (data.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) }) as? [String: Any] ?? [:]
        }
    }

    public let connection: RawHTTPClient
    public let head: RawHTTPClient.Response
    private var pending = ""

    public init(port: Int, path: String = "/api/events", query: String = "", headers: [String: String] = [:],
                timeout: Duration = .seconds(20)) throws {
        connection = try RawHTTPClient(port: port, timeout: timeout)
        var request = "GET \(path)\(query.isEmpty ? "" : "?" + query) HTTP/1.1\r\nHost: localhost\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try connection.send(request + "\r\n")
        head = try connection.readHead()
    }

    /// The next event (or comment, or retry line) the server sent.
    public func next() throws -> Event {
        while true {
            if let end = pending.range(of: "\n\n") {
                let text = String(pending[..<end.upperBound])
                pending.removeSubrange(..<end.upperBound)
                var fields: [String: String] = [:]
                for line in text.split(separator: "\n") {
                    guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else { continue }
                    fields[String(line[..<colon])] = String(line[line.index(after: colon)...].dropFirst(line[line.index(after: colon)...].hasPrefix(" ") ? 1 : 0))
                }
                return Event(id: fields["id"], type: fields["event"], data: fields["data"], text: text)
            }
            guard let chunk = try connection.readChunk() else {
                throw RawHTTPClient.Failure(description: "the stream ended")
            }
            pending += String(decoding: chunk, as: UTF8.self)
        }
    }

    /// The next real event, skipping keep-alives and retry lines; a failure once `limit`
    /// has passed without one (keep-alives alone would otherwise keep a test waiting for ever).
    public func nextChange(within limit: Duration = .seconds(60)) throws -> Event {
        let deadline = ContinuousClock.now + limit
        while true {
            let event = try next()
            if event.type != nil { return event }
            guard ContinuousClock.now < deadline else {
                throw RawHTTPClient.Failure(description: "no event within \(limit), only keep-alives")
            }
        }
    }

    /// Reads on until the server ends the stream (its last chunk, or closing the
    /// connection); false if the read timed out, or once `limit` has passed (keep-alives
    /// would otherwise keep it reading for ever).
    public func waitForEnd(within limit: Duration = .seconds(60)) -> Bool {
        let deadline = ContinuousClock.now + limit
        do {
            while try connection.readChunk() != nil {
                if ContinuousClock.now >= deadline { return false }
            }
            return true
        } catch let failure as RawHTTPClient.Failure {
            return failure.description.contains("closed by the server")
        } catch {
            return false
        }
    }
}
