import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `BLOCKED_WORDS_FILE`: one word or phrase a line, UTF-8; `#` at the start of a line or
/// after a space starts a comment; blank lines are ignored.
enum BlockedWordsFile {
    /// Far more than any word list; a wrong path (a log, a disk image, `/dev/zero`) is refused
    /// instead of read whole into memory.
    static let maxBytes = 16 * 1024 * 1024

    struct Unreadable: Error, CustomStringConvertible {
        let path: String
        let reason: String
        var description: String { "BLOCKED_WORDS_FILE \(path): \(reason)" }
    }

    /// The entries of a list's text, trimmed, comments and blank lines gone. Pure: the tests
    /// and the fuzzer call it on strings.
    static func entries(in text: String) -> [String] {
        // A byte order mark would hide a first line's `#`.
        let body = text.hasPrefix("\u{FEFF}") ? Substring(text.unicodeScalars.dropFirst()) : Substring(text)
        return body.split(whereSeparator: \.isNewline).compactMap { line in
            let entry = withoutComment(line).trimmingCharacters(in: .whitespaces)
            return entry.isEmpty ? nil : entry
        }
    }

    /// `#` starts a comment only at the start or after whitespace, so that a stray `#` inside
    /// a word (`c#`) is not mistaken for one; it is a separator between words anyway.
    private static func withoutComment(_ line: Substring) -> Substring {
        var previous: Character?
        for index in line.indices {
            if line[index] == "#", previous?.isWhitespace ?? true { return line[..<index] }
            previous = line[index]
        }
        return line
    }

    /// The filter the file at `path` describes: read whole, then parsed. Throws `Unreadable`
    /// saying why in an operator's words (no such file, permission denied, not UTF-8, too big).
    static func load(path: String) throws(Unreadable) -> WordFilter {
        let bytes = try contents(of: path)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw Unreadable(path: path, reason: "is not UTF-8 text")
        }
        return WordFilter(entries: entries(in: text))
    }

    private static func contents(of path: String) throws(Unreadable) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Unreadable(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Unreadable(path: path, reason: String(cString: strerror(errno))) }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw Unreadable(path: path, reason: "is not a regular file") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Unreadable(path: path, reason: String(cString: strerror(errno)))
            }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            guard bytes.count <= maxBytes else {
                throw Unreadable(path: path, reason: "is larger than \(maxBytes / 1024 / 1024) MiB")
            }
        }
    }
}
