/// Prometheus text exposition (format 0.0.4): one `# HELP`/`# TYPE` pair per metric,
/// then its samples.
struct MetricsText {
    enum Kind: String {
        case counter
        case gauge
        case histogram
    }

    private(set) var text = ""

    /// The `# HELP` and `# TYPE` lines; the samples follow with `sample`.
    mutating func describe(_ name: String, _ kind: Kind, help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(kind.rawValue)\n"
    }

    mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escaped($0.1))\"" }.joined(separator: ",") + "}"
        }
        text += " " + Self.format(value) + "\n"
    }

    /// One labelled series of a histogram described before: cumulative buckets, sum, count.
    mutating func histogram(_ name: String, label: (String, String), _ histogram: RequestMetrics.Histogram) {
        var cumulative = 0
        for (bound, count) in zip(RequestMetrics.buckets, histogram.counts) {
            cumulative += count
            sample(name + "_bucket", [label, ("le", Self.format(bound))], Double(cumulative))
        }
        sample(name + "_bucket", [label, ("le", "+Inf")], Double(histogram.count))
        sample(name + "_sum", [label], histogram.sum)
        sample(name + "_count", [label], Double(histogram.count))
    }

    /// A metric with one unlabelled sample.
    mutating func add(_ name: String, _ kind: Kind, help: String, value: Double) {
        describe(name, kind, help: help)
        sample(name, [], value)
    }

    mutating func add(_ name: String, _ kind: Kind, help: String, value: Int) {
        add(name, kind, help: help, value: Double(value))
    }

    /// Integers without a fraction, so counters read as counts; +Inf as Prometheus spells it.
    static func format(_ value: Double) -> String {
        if value == .infinity { return "+Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// Label values escape backslash, quote and newline (none of ours has them today).
    private static func escaped(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
