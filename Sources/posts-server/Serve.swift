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
        AllocatorTuning.apply()
        try TerminationSignals.install()
        let (configuration, directURL) = try options.resolveRequiringDatabase(for: "serve")
        let logger = Bootstrap.logger(format: configuration.logFormat)
        if !noMigrate {
            try Migrations.apply(conninfo: directURL, directory: Migrations.locate(), logger: logger)
        }
        let application = try Application(configuration: configuration, logger: logger)
        TerminationSignals.wait(onHangUp: application.reload)
        application.stop()
    }
}

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending migrations and exit.")

    @OptionGroup var options: SharedOptions

    func run() throws {
        defer { StandardOutput.flush() }
        let (configuration, directURL) = try options.resolveRequiringDatabase(for: "migrate")
        let logger = Bootstrap.logger(format: configuration.logFormat)
        try Migrations.apply(conninfo: directURL, directory: Migrations.locate(), logger: logger)
    }
}
