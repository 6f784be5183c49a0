import Foundation
import Testing
@testable import PostsServer

/// The list file's syntax (pure) and its reading (a temporary file).
@Suite struct BlockedWordsFileTests {
    @Test func entries_areLinesLessCommentsAndBlanks() {
        let text = """
            \u{FEFF}# a comment on the first line, after a byte order mark
            badword
              padded phrase   \r
            hate speech # a comment after an entry

               # an indented comment
            c#
            #notanentry
            \t
            last
            """
        #expect(BlockedWordsFile.entries(in: text) == ["badword", "padded phrase", "hate speech", "c#", "last"])
    }

    @Test func entries_ofAnEmptyOrCommentOnlyFile_areNone() {
        #expect(BlockedWordsFile.entries(in: "").isEmpty)
        #expect(BlockedWordsFile.entries(in: "# nothing\n\n#\n").isEmpty)
    }

    @Test func load_buildsTheFilterTheFileDescribes() throws {
        let path = try Self.write("# list\nbadword\nhate speech\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let filter = try BlockedWordsFile.load(path: path)
        #expect(filter.entryCount == 2)
        #expect(filter.matches("such HATE, speech"))
        #expect(!filter.matches("list"))
    }

    @Test func load_refusesWhatIsNoList_sayingWhy() throws {
        let missing = NSTemporaryDirectory() + "no-such-list-\(UUID().uuidString)"
        #expect(Self.failure(missing)?.contains("No such file") == true)
        #expect(Self.failure(NSTemporaryDirectory())?.contains("not a regular file") == true)
        #expect(Self.failure("/dev/zero")?.contains("not a regular file") == true)
        let latin1 = try Self.write(Data([0x63, 0x61, 0x66, 0xE9, 0x0A]))
        defer { try? FileManager.default.removeItem(atPath: latin1) }
        #expect(Self.failure(latin1)?.contains("not UTF-8") == true)
        #expect(Self.failure(latin1)?.hasPrefix("BLOCKED_WORDS_FILE \(latin1): ") == true)
    }

    static func write(_ text: String) throws -> String { try write(Data(text.utf8)) }

    static func write(_ data: Data) throws -> String {
        let path = NSTemporaryDirectory() + "blocked-words-\(UUID().uuidString).txt"
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The description of the error loading `path` throws; nil if it loads.
    private static func failure(_ path: String) -> String? {
        do {
            _ = try BlockedWordsFile.load(path: path)
            return nil
        } catch {
            return error.description
        }
    }
}
