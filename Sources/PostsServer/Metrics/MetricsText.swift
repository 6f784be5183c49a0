/// Prometheus text exposition (format 0.0.4): one `# HELP`/`# TYPE` pair per metric,
/// then its samples.
struct MetricsText {
    enum Kind: String {
        case counter
        case gauge
    }

    private(set) var text = ""

    mutating func add(_ name: String, _ kind: Kind, help: String, value: Double) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(kind.rawValue)\n\(name) \(Self.format(value))\n"
    }

    mutating func add(_ name: String, _ kind: Kind, help: String, value: Int) {
        add(name, kind, help: help, value: Double(value))
    }

    /// Integers without a fraction, so counters read as counts.
    private static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
