import Foundation

/// Where the server's statements go (API.md "Many databases"): the primary (`DATABASE_URL`,
/// perhaps a pooler in front of it), a direct line to it for what a transaction-mode pooler
/// cannot carry (`LISTEN`, migrations, the CLI), and the streaming replicas reads may use.
public struct DatabaseTopology: Sendable, Equatable {
    public enum Pooler: String, Sendable, CaseIterable {
        /// `DATABASE_URL` is PostgreSQL itself or a session-mode pooler.
        case none
        /// A pooler in transaction mode (PgBouncer, Supavisor): nothing of a session may
        /// outlive a transaction.
        case transaction
    }

    public var pooler = Pooler.none
    /// `DATABASE_DIRECT_URL`: nil means `DATABASE_URL` itself.
    public var directURL: String?
    /// `DATABASE_REPLICA_URLS`, in the order given.
    public var replicaURLs: [String] = []
    /// `REPLICA_MAX_LAG`: a replica further behind takes no reads until it has caught up.
    public var replicaMaxLag: Duration = .seconds(5)

    public init() {}

    /// The connection `LISTEN` and migrations use.
    public func direct(primary databaseURL: String) -> String { directURL ?? databaseURL }

    static func parse(pooler: String?, directURL: String?, replicaURLs: String?, maxLag: String?) throws -> Self {
        var topology = Self()
        if let pooler {
            guard let parsed = Pooler(rawValue: pooler) else {
                throw Configuration.Invalid(description: "DATABASE_POOLER must be none or transaction, not \"\(pooler)\"")
            }
            topology.pooler = parsed
        }
        topology.directURL = directURL
        topology.replicaURLs = (replicaURLs ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if let maxLag {
            // At most an hour: a replica further behind serves reads no one should want.
            guard let lag = Self.parseLag(maxLag), lag <= .seconds(3600) else {
                throw Configuration.Invalid(description: "REPLICA_MAX_LAG must be a duration up to 1h like 5s, 500ms or 1m, not \"\(maxLag)\"")
            }
            topology.replicaMaxLag = lag
        }
        return topology
    }

    /// `parseDuration`'s forms, and milliseconds (`500ms`): a lag worth bounding may be short.
    private static func parseLag(_ text: String) -> Duration? {
        guard text.hasSuffix("ms") else { return parseDuration(text) }
        let digits = text.dropLast(2)
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let milliseconds = Int64(digits), milliseconds > 0 else { return nil }
        return .milliseconds(milliseconds)
    }
}
