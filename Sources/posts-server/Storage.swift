import ArgumentParser
import Foundation
import PostsServer

/// `posts-server storage …`: work on the store of the images (API.md "Storage for many instances").
struct Storage: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Work on the store of the images (a folder or an S3-compatible bucket).",
        subcommands: [StorageCopyCommand.self])
}

/// `posts-server storage copy --from URL --to URL`: what moves a one-machine install to a
/// bucket without downtime. No database: the stores are all it reads and writes.
struct StorageCopyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy every stored image and size from one store to another.",
        discussion: """
            Both URLs take STORAGE_URL's forms: file:///abs/folder, or \
            s3://bucket[/prefix]?endpoint=http://host:port&region=us-east-1&path_style=true. \
            An s3:// store signs with S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (both ends, \
            when both are buckets). Only the server's images and their sizes are copied; a \
            name the destination already holds is left as it is, so running the copy again \
            (after an interruption, or after switching STORAGE_URL) copies only what is \
            missing. Progress goes to standard error; exit 1 when a store fails, 130 when \
            interrupted.
            """)

    @Option(help: "The store to copy from: file:///folder or s3://bucket[/prefix]?… .")
    var from: String
    @Option(help: "The store to copy to: file:///folder or s3://bucket[/prefix]?… .")
    var to: String
    @Option(help: "A progress line every this many objects.")
    var progressEvery = 100

    func validate() throws {
        guard progressEvery > 0 else { throw ValidationError("--progress-every must be at least 1") }
    }

    func run() throws {
        // Ctrl-C stops between objects, so the scratch folder is removed (a second one ends
        // the process at once; what was copied stays either way).
        try TerminationSignals.install()
        let environment = ProcessInfo.processInfo.environment
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let copy: StorageCopy
        do {
            copy = try StorageCopy(from: from, to: to, accessKeyID: value("S3_ACCESS_KEY_ID"),
                                   secretAccessKey: value("S3_SECRET_ACCESS_KEY"), progressEvery: progressEvery,
                                   shouldStop: TerminationSignals.haveArrived, progress: Self.report)
        } catch {
            throw ValidationError(error.description)
        }
        Self.report("copying from \(from) to \(to)")
        do {
            try copy.run()
        } catch {
            Self.report("stopped \(error)")
            throw ExitCode(error.interrupted ? 130 : 1)
        }
    }

    private static func report(_ line: String) {
        FileHandle.standardError.write(Data("posts-server storage copy: \(line)\n".utf8))
    }
}
