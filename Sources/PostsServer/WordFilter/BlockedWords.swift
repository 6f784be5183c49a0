import Locking
import Logging

/// The word filter in force, shared by every request and replaced whole when the file is
/// read again (SIGHUP). Requests take the current filter under a lock held for a copy (a
/// few reference counts) and match outside it; a reload builds its filter before taking
/// the lock, so a request never waits on a file or a parse. Requests without text never
/// come here, and without `BLOCKED_WORDS_FILE` nothing is locked or normalised at all.
public final class BlockedWords: Sendable {
    /// The list's file; nil when the filter is off.
    public let path: String?
    private let current: ParkingLock<WordFilter>
    private let logger: Logger

    /// API.md's message for a text that holds a blocked word (422 `validation_failed`).
    static let refusal = APIError.invalid("contains a blocked word")

    /// Reads the file at once: a server that cannot read its list does not start (it
    /// would otherwise serve unfiltered while the operator believes otherwise).
    init(path: String?, logger: Logger) throws(BlockedWordsFile.Unreadable) {
        self.path = path
        self.logger = logger
        guard let path else {
            current = ParkingLock(.empty)
            return
        }
        let filter = try BlockedWordsFile.load(path: path)
        current = ParkingLock(filter)
        logger.info("loaded blocked words", metadata: ["file": "\(path)", "entries": "\(filter.entryCount)"])
    }

    /// A filter that lets everything through, for services made without a configuration.
    static let off = try! BlockedWords(path: nil, logger: Logger(label: "blocked-words"))

    /// Reads the file again. A failure keeps the list in force (a half-saved or deleted
    /// file must not switch the filter off) and says so in a warning.
    public func reload() {
        guard let path else {
            logger.info("nothing to reload: BLOCKED_WORDS_FILE is not set")
            return
        }
        do {
            let filter = try BlockedWordsFile.load(path: path)
            current.withLock { $0 = filter }
            logger.info("loaded blocked words", metadata: ["file": "\(path)", "entries": "\(filter.entryCount)"])
        } catch {
            logger.warning("cannot reload blocked words; the previous list stays in force",
                           metadata: ["file": "\(path)", "reason": "\(error.reason)"])
        }
    }

    /// Whether `text` holds no blocked word.
    func allows(_ text: String) -> Bool {
        guard path != nil else { return true }
        return !current.withLock { $0 }.matches(text)
    }

    /// 422 "contains a blocked word" if any of `texts` holds one; nil ones (fields a patch
    /// leaves alone) are skipped.
    func check(_ texts: String?...) throws(APIError) {
        guard path != nil else { return }
        let filter = current.withLock { $0 }
        for case let text? in texts where filter.matches(text) {
            throw Self.refusal
        }
    }
}
