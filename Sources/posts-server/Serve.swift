import ArgumentParser
import Foundation
import Logging
import PostsServer

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending migrations, then serve.")

    @OptionGroup var options: SharedOptions

    func run() throws {
        let configuration = try options.resolve()
        let logger = Bootstrap.logger(format: configuration.logFormat)
        let application = try Application(configuration: configuration, logger: logger)
        Bootstrap.waitForTerminationSignal()
        application.stop()
    }
}
