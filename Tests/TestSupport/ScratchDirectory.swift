import Foundation
import Synchronization

/// Folders a test run writes into (uploads, mail spools), all under one folder of this
/// process that goes with it: a test run leaves nothing behind in the temporary folder.
///
/// A run that was killed cannot clean up after itself, so the first use also removes the
/// folders of processes that no longer exist.
public enum ScratchDirectory {
    private static let prefix = "posts-server-tests-"
    private static let root = Mutex<String?>(nil)

    /// A new, not yet existing path `<run folder>/<name>-<uuid>` (the server makes it).
    public static func path(_ name: String) -> String {
        runFolder() + "/\(name)-\(UUID().uuidString)"
    }

    private static func runFolder() -> String {
        root.withLock { root in
            if let root { return root }
            removeFoldersOfEndedRuns()
            let folder = NSTemporaryDirectory() + prefix + "\(getpid())"
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            // atexit takes no context: the pid names the folder again.
            atexit {
                try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "posts-server-tests-\(getpid())")
            }
            root = folder
            return folder
        }
    }

    private static func removeFoldersOfEndedRuns() {
        let temporary = NSTemporaryDirectory()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
        for name in names where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)) else { continue }
            // ESRCH: no such process (EPERM would mean it lives under another user).
            if kill(pid, 0) != 0, errno == ESRCH {
                try? FileManager.default.removeItem(atPath: temporary + name)
            }
        }
    }
}
