import Foundation
import Logging
import Postgres

/// Where the migration files are, and applying them with a log line per file.
public enum Migrations {
    /// `MIGRATIONS_DIR` if set, else `./migrations`, else next to the executable
    /// (`../share/posts-server/migrations` for an installed binary, or the repository's
    /// folder for one run from `.build/`).
    public static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URL {
        if let explicit = environment["MIGRATIONS_DIR"], !explicit.isEmpty {
            return URL(fileURLWithPath: explicit)
        }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let candidates = [
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("migrations"),
            executable.appendingPathComponent("../share/posts-server/migrations"),
            executable.appendingPathComponent("../../../migrations"),
            executable.appendingPathComponent("../../migrations"),
        ]
        for candidate in candidates {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), isDirectory.boolValue {
                return candidate.standardizedFileURL
            }
        }
        throw Configuration.Invalid(description: "no migrations folder found; run from the repository or set MIGRATIONS_DIR")
    }

    /// A failed migration is reported with what PostgreSQL said (the file, the error and
    /// its message): the operator reading `posts-server migrate`'s output must see why (the
    /// search migration's refusal says which extensions to create), not only a SQLSTATE.
    public static func apply(conninfo: String, directory: URL, logger: Logger) throws {
        let applied: [String]
        do {
            applied = try Migrator(directory: directory).migrate(conninfo: conninfo)
        } catch let error as PostgresError where error.kind == .migration {
            // PostgreSQL's words, without the context lines and the statement's text after them.
            let said = error.details.components(separatedBy: "\nCONTEXT:")[0].components(separatedBy: " in: ")[0]
            throw Failed(description: said)
        }
        for name in applied { logger.info("applied migration", metadata: ["file": "\(name)"]) }
        if applied.isEmpty { logger.info("database schema is up to date") }
    }

    public struct Failed: Error, CustomStringConvertible {
        public let description: String
    }
}
