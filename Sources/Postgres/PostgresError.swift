/// A five-character SQLSTATE code (PostgreSQL manual, appendix A).
public struct SQLState: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let uniqueViolation = SQLState(rawValue: "23505")
    public static let foreignKeyViolation = SQLState(rawValue: "23503")
    public static let notNullViolation = SQLState(rawValue: "23502")
    public static let checkViolation = SQLState(rawValue: "23514")
    public static let invalidTextRepresentation = SQLState(rawValue: "22P02")
    public static let characterNotInRepertoire = SQLState(rawValue: "22021")
    public static let serializationFailure = SQLState(rawValue: "40001")
    public static let deadlockDetected = SQLState(rawValue: "40P01")
    /// The statement ran past `statement_timeout` and the server cancelled it.
    public static let queryCanceled = SQLState(rawValue: "57014")
    public static let duplicateDatabase = SQLState(rawValue: "42P04")
    public static let syntaxError = SQLState(rawValue: "42601")
    public static let inFailedSQLTransaction = SQLState(rawValue: "25P02")

    /// Errors that mean the database cannot serve the statement now: the server is going
    /// away or not taking connections, or the statement ran out of time (a lock wait, a
    /// slow plan). Worth a retry later; not the statement's fault.
    public var meansUnavailable: Bool {
        rawValue.hasPrefix("08") || rawValue.hasPrefix("57P") || rawValue == "53300" || self == .queryCanceled
    }

    /// Conflicts between concurrent transactions, which the same transaction run again
    /// usually gets through.
    public var meansRetryableConflict: Bool {
        self == .serializationFailure || self == .deadlockDetected
    }
}

/// A failure of the database layer. `description` is safe to show anyone (no SQL, no
/// values, no server text); `details` is for the log.
public struct PostgresError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The server could not be reached or refused us.
        case connectionFailed
        /// The connection broke, or the server did not answer within the client-side
        /// `queryTimeout`. (A statement the server cancelled itself, after
        /// `statement_timeout`, is a `.server` error with `.queryCanceled`.)
        case connectionLost
        /// Every pooled connection stayed busy for the whole wait.
        case poolTimeout
        /// The server ran the statement and reported an error (see `sqlState`).
        case server
        /// A row did not decode into the Swift type asked for.
        case decoding
        /// A migration problem: a file changed after it was applied, or a file is malformed.
        case migration
    }

    public let kind: Kind
    public let sqlState: SQLState?
    /// The server's or libpq's message, the SQL text (never the values), and where.
    public let details: String
    public let file: String
    public let line: Int

    public init(_ kind: Kind, sqlState: SQLState? = nil, details: String, file: String = #fileID, line: Int = #line) {
        self.kind = kind
        self.sqlState = sqlState
        self.details = details
        self.file = file
        self.line = line
    }

    /// True when the database, not the statement, is the problem: the caller should say
    /// 503 and try again later.
    public var isUnavailable: Bool {
        switch kind {
        case .connectionFailed, .connectionLost, .poolTimeout: true
        case .server: sqlState?.meansUnavailable ?? false
        case .decoding, .migration: false
        }
    }

    public var description: String {
        "database error (\(kind)\(sqlState.map { ", SQLSTATE \($0)" } ?? ""))"
    }

    /// Everything, for the log: never for a client.
    public var debugDescription: String { "\(description) at \(file):\(line): \(details)" }
}
