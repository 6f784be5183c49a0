import Foundation

/// An object of the store as a local file: the store's own (a folder's), or a copy fetched
/// to a scratch path in the upload folder, removed once the reader has opened it (an open
/// descriptor keeps the bytes). What the store answers is this, not an HTTP type: the
/// route opens it as its response's body.
struct ObjectFile: Sendable {
    let path: String
    /// A fetched copy (or a size just made) that is the reader's to remove.
    let isScratch: Bool

    /// Opens it with `open` (nil: it could not be opened), then removes a scratch copy.
    func opened<T>(with open: (String) -> T?) -> T? {
        defer { discard() }
        return open(path)
    }

    /// Done with it unread (its existence was the answer): a scratch copy goes.
    func discard() {
        if isScratch { unlink(path) }
    }
}
