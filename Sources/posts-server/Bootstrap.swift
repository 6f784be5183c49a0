import Dispatch
import Foundation
import Logging
import PostsServer

/// Process-wide set-up shared by the subcommands.
enum Bootstrap {
    static func logger(format: LineLogHandler.Format) -> Logger {
        LoggingSystem.bootstrap { LineLogHandler(label: $0, format: format) }
        return Logger(label: "posts-server")
    }

    /// Blocks until SIGTERM or SIGINT arrives.
    static func waitForTerminationSignal() {
        let received = DispatchSemaphore(value: 0)
        var sources: [DispatchSourceSignal] = []
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { received.signal() }
            source.resume()
            sources.append(source)
        }
        received.wait()
        sources.forEach { $0.cancel() }
    }
}
