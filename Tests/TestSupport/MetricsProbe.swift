import Foundation

/// Reads a server's `/metrics` and waits for one of its values to reach a condition: how a
/// test learns what happened inside the server (a subscriber cut off) without guessing a delay.
public struct MetricsProbe {
    public let port: Int

    public init(port: Int) {
        self.port = port
    }

    /// The sample of an unlabelled metric, or nil when absent.
    public func value(_ name: String) throws -> Double? {
        let text = try APIClient(port: port).get("/metrics").text
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }

    /// Until `condition` holds for the metric's value (`eventually`); false when `timeout`
    /// passes first.
    public func wait(for name: String, timeout: Duration = .seconds(10), until condition: (Double) -> Bool) throws -> Bool {
        try eventually(timeout: timeout) { try value(name).map(condition) ?? false }
    }
}
