import Foundation
import HTTP
import PostsServer

/// The poller the test servers run on: `EVENT_LOOP` from the environment, read the way the
/// server reads it, else the platform's default. `scripts/test` runs the HTTP and
/// end-to-end suites once more with `EVENT_LOOP=dispatch`, so both pollers are tested on
/// Linux; servers started as processes (`ServerProcess`) inherit the variable.
public enum TestEventLoop {
    public static func fromEnvironment() throws -> PollerKind {
        let setting = ProcessInfo.processInfo.environment.filter { $0.key == "EVENT_LOOP" }
        return try Configuration.fromEnvironment(setting).eventLoop
    }
}
