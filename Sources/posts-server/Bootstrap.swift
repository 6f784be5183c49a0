import Foundation
import Logging
import PostsServer

/// Process-wide set-up shared by the subcommands.
enum Bootstrap {
    static func logger(format: LineLogHandler.Format) -> Logger {
        LoggingSystem.bootstrap { LineLogHandler(label: $0, format: format) }
        return Logger(label: "posts-server")
    }
}
