import ArgumentParser
import Foundation
import Logging
import PostsServer

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending migrations, then serve.")

    @OptionGroup var options: SharedOptions

    @Flag(name: .customLong("no-migrate"), help: "Serve without applying pending migrations.")
    var noMigrate = false

    func run() throws {
        defer { StandardOutput.flush() }
        let configuration = try options.resolve()
        guard let databaseURL = configuration.databaseURL else {
            throw ValidationError("DATABASE_URL is required for `serve` (a libpq connection string or postgres:// URL)")
        }
        let logger = Bootstrap.logger(format: configuration.logFormat)
        if !noMigrate {
            try Migrations.apply(conninfo: databaseURL, directory: Migrations.locate(), logger: logger)
        }
        let application = try Application(configuration: configuration, logger: logger)
        Bootstrap.waitForTerminationSignal()
        application.stop()
    }
}

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending migrations and exit.")

    @OptionGroup var options: SharedOptions

    func run() throws {
        defer { StandardOutput.flush() }
        let configuration = try options.resolve()
        guard let databaseURL = configuration.databaseURL else {
            throw ValidationError("DATABASE_URL is required for `migrate` (a libpq connection string or postgres:// URL)")
        }
        let logger = Bootstrap.logger(format: configuration.logFormat)
        try Migrations.apply(conninfo: databaseURL, directory: Migrations.locate(), logger: logger)
    }
}
