import Foundation
import HTTP
import Testing
import TestSupport
@testable import PostsServer

/// `posts-server storage copy` (API.md "Storage for many instances"), against the real
/// SeaweedFS of the test run: every image and size moves between a folder and a bucket,
/// other files stay, a second run copies nothing, an interrupted run resumes.
@Suite struct StorageCopyTests {
    private static let bases = ["0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210",
                                "00000000000000000000000000000abc", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]

    /// Each original with a size or two, in every stored format (a GIF's sizes are PNGs).
    private static let images = [
        "\(bases[0]).jpg", "\(bases[0])-w320.jpg", "\(bases[0])-w1080.jpg",
        "\(bases[1]).gif", "\(bases[1])-w640.png",
        "\(bases[2]).png", "\(bases[2])-w160.png",
        "\(bases[3]).webp", "\(bases[3])-w1600.webp",
    ].sorted()

    /// What the server never writes: copied by no one.
    private static let foreign = ["notes.txt", "\(bases[0].uppercased()).jpg", "\(bases[0]).jpeg", "\(bases[1])-w320.gif",
                                  "\(bases[2])-small.png"]

    /// Bytes of their own for each name: a few hundred KiB, so they go through files, not one read.
    private static func bytes(of name: String) -> [UInt8] {
        let seed = Array(name.utf8)
        return (0..<(200_000 + seed.count * 1000)).map { seed[$0 % seed.count] &+ UInt8(truncatingIfNeeded: $0 / seed.count) }
    }

    /// A folder holding `names` (and a hidden file and a sub-folder, which a folder store never lists).
    private static func makeFolder(_ names: [String]) throws -> String {
        let folder = ScratchDirectory.path("copy")
        try FileManager.default.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: true)
        for name in names + [".upload-part.jpg", "sub/\(bases[0]).jpg"] {
            try Data(bytes(of: name)).write(to: URL(fileURLWithPath: folder + "/" + name))
        }
        return folder
    }

    private static func copy(from: String, to: String, _ store: SeaweedStore, progressEvery: Int = 100,
                             shouldStop: @escaping () -> Bool = { false }) throws -> (StorageCopy, Lines) {
        let lines = Lines()
        let copy = try StorageCopy(from: from, to: to, accessKeyID: store.accessKey, secretAccessKey: store.secretKey,
                                   progressEvery: progressEvery, shouldStop: shouldStop) { lines.append($0) }
        return (copy, lines)
    }

    final class Lines: @unchecked Sendable {
        var all: [String] = []
        func append(_ line: String) { all.append(line) }
    }

    @Test func fileToS3_copiesEveryImageAndSize_skipsTheRest_andASecondRunCopiesNothing() throws {
        let store = try SeaweedStore.shared
        let prefix = SeaweedStore.makePrefix()
        let folder = try Self.makeFolder(Self.images + Self.foreign)
        defer { try? FileManager.default.removeItem(atPath: folder) }

        let (copy, lines) = try Self.copy(from: "file://" + folder, to: store.storageURL(prefix: prefix), store, progressEvery: 4)
        let counts = try copy.run()
        #expect(counts == StorageCopy.Counts(copied: Self.images.count, alreadyThere: 0, skipped: Self.foreign.count))
        #expect(try store.keys(under: prefix) == Self.images.map { "\(prefix)/\($0)" })
        for name in Self.images {
            #expect(try store.contents(of: "\(prefix)/\(name)") == Self.bytes(of: name), "\(name)")
        }
        // Labelled with the format the name says (the filer serves what S3 was told).
        let gifSize = try APIClient(port: store.filerPort).get("/buckets/\(store.bucket)/\(prefix)/\(Self.bases[1])-w640.png")
        #expect(gifSize.header("Content-Type") == "image/png")
        let original = try APIClient(port: store.filerPort).get("/buckets/\(store.bucket)/\(prefix)/\(Self.bases[3]).webp")
        #expect(original.header("Content-Type") == "image/webp")
        // 14 objects: a line after 4, 8 and 12, and the end.
        #expect(lines.all.count == 4)
        #expect(lines.all.dropLast().map { $0.prefix { $0 != ":" } } == ["4 objects so far", "8 objects so far", "12 objects so far"])
        #expect(lines.all.last == "done, 14 objects: 9 copied, 0 already there, 5 skipped (not this server's images)")

        let (again, _) = try Self.copy(from: "file://" + folder, to: store.storageURL(prefix: prefix), store)
        #expect(try again.run() == StorageCopy.Counts(copied: 0, alreadyThere: Self.images.count, skipped: Self.foreign.count))
        #expect(try store.keys(under: prefix).count == Self.images.count)
    }

    /// Stopped part way (Ctrl-C between objects), the copy keeps what it wrote; the next
    /// run copies only the rest.
    @Test func anInterruptedCopy_resumesWhereItStopped() throws {
        let store = try SeaweedStore.shared
        let prefix = SeaweedStore.makePrefix()
        let folder = try Self.makeFolder(Self.images)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var asked = 0
        let (first, _) = try Self.copy(from: "file://" + folder, to: store.storageURL(prefix: prefix), store) {
            asked += 1
            return asked > 3
        }
        let failure = try #require(throws: StorageCopy.Failure.self) { try first.run() }
        #expect(failure.interrupted && failure.counts == StorageCopy.Counts(copied: 3))
        #expect(failure.description.hasPrefix("after 3 objects (3 copied, 0 already there, 0 skipped (not this server's images)): interrupted."))
        #expect(failure.description.hasSuffix("Running the same command again resumes where it stopped"))
        #expect(try store.keys(under: prefix) == Self.images.prefix(3).map { "\(prefix)/\($0)" })

        let (second, _) = try Self.copy(from: "file://" + folder, to: store.storageURL(prefix: prefix), store)
        #expect(try second.run() == StorageCopy.Counts(copied: Self.images.count - 3, alreadyThere: 3))
        #expect(try store.keys(under: prefix) == Self.images.map { "\(prefix)/\($0)" })
    }

    /// Back to a folder: only the prefix's own objects (not a "folder" below it, not
    /// another prefix's), and the destination folder is made.
    @Test func s3ToFile_copiesThePrefixsImages() throws {
        let store = try SeaweedStore.shared
        let prefix = SeaweedStore.makePrefix()
        for name in Self.images + Self.foreign + ["sub/\(Self.bases[0]).jpg"] {
            try store.put(Self.bytes(of: name), at: "\(prefix)/\(name)")
        }
        try store.put(Self.bytes(of: "other"), at: "\(prefix)-other/\(Self.bases[0]).png")
        let folder = ScratchDirectory.path("copy") + "/uploads"
        defer { try? FileManager.default.removeItem(atPath: (folder as NSString).deletingLastPathComponent) }

        let (copy, _) = try Self.copy(from: store.storageURL(prefix: prefix), to: "file://" + folder, store)
        #expect(try copy.run() == StorageCopy.Counts(copied: Self.images.count, alreadyThere: 0, skipped: Self.foreign.count))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == Self.images)
        for name in Self.images {
            #expect(FileManager.default.contents(atPath: folder + "/" + name).map(Array.init) == Self.bytes(of: name), "\(name)")
        }

        let (again, _) = try Self.copy(from: store.storageURL(prefix: prefix), to: "file://" + folder, store)
        #expect(try again.run() == StorageCopy.Counts(copied: 0, alreadyThere: Self.images.count, skipped: Self.foreign.count))
    }

    /// A listing of many pages is followed to its end (S3 pages by 1000; here by 2).
    @Test func aListingOfManyPages_isCopiedWhole() throws {
        let source = try Self.makeFolder(Self.images + Self.foreign)
        let destination = ScratchDirectory.path("copy")
        defer {
            try? FileManager.default.removeItem(atPath: source)
            try? FileManager.default.removeItem(atPath: destination)
        }
        let paged = PagedStore(folder: try FileObjectStore(directory: source), pageSize: 2)
        let copy = StorageCopy(from: paged, to: try FileObjectStore(directory: destination)) { _ in }
        #expect(try copy.run() == StorageCopy.Counts(copied: Self.images.count, alreadyThere: 0, skipped: Self.foreign.count))
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination).sorted() == Self.images)
    }

    /// What the options name is checked before anything is copied, each refusal naming its option.
    @Test func badStores_areRefusedNamingTheOption() throws {
        let store = try SeaweedStore.shared
        func refusal(_ from: String, _ to: String, credentials: Bool = true) -> String? {
            do {
                _ = try StorageCopy(from: from, to: to, accessKeyID: credentials ? store.accessKey : nil,
                                    secretAccessKey: credentials ? store.secretKey : nil) { _ in }
                return nil
            } catch {
                return error.description
            }
        }
        let missing = ScratchDirectory.path("copy-missing")
        #expect(refusal("file://" + missing, store.storageURL())?.hasPrefix("--from: there is no folder") == true)
        #expect(!FileManager.default.fileExists(atPath: missing))
        #expect(refusal("uploads", store.storageURL())?.hasPrefix("--from: STORAGE_URL must start with") == true)
        #expect(refusal("file:///tmp", "s3://a")?.hasPrefix("--to: STORAGE_URL needs a bucket name") == true)
        #expect(refusal("file:///tmp", store.storageURL(), credentials: false)?.contains("--to: S3_ACCESS_KEY_ID") == true)
        #expect(refusal(store.storageURL(prefix: "a"), store.storageURL(prefix: "a"))?.contains("the same store") == true)
        #expect(refusal(store.storageURL(prefix: "a"), store.storageURL(prefix: "b")) == nil)
    }
}

/// The command itself, as an operator runs it: progress and the outcome on standard error,
/// the exit status saying whether everything was copied.
@Suite struct StorageCopyCommandTests {
    @Test func copy_printsProgress_removesItsScratchFolder_andExitsZero() throws {
        let store = try SeaweedStore.shared
        let prefix = SeaweedStore.makePrefix()
        let folder = ScratchDirectory.path("copy")
        let scratchParent = folder + "/tmp"
        try FileManager.default.createDirectory(atPath: scratchParent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let names = ["0123456789abcdef0123456789abcdef.jpg", "0123456789abcdef0123456789abcdef-w320.jpg",
                     "fedcba9876543210fedcba9876543210.png", "readme.txt"]
        for name in names { try Data("bytes of \(name)".utf8).write(to: URL(fileURLWithPath: folder + "/" + name)) }
        var environment = store.environment()
        environment["STORAGE_URL"] = "file:///nowhere"   // not what the copy reads
        environment["TMPDIR"] = scratchParent

        for run in 0..<2 {
            let process = try ServerProcess(["storage", "copy", "--from", "file://" + folder, "--to", store.storageURL(prefix: prefix),
                                             "--progress-every", "2"], environment: environment)
            #expect(process.waitForExit() == 0)
            #expect(process.lines.first == "posts-server storage copy: copying from file://\(folder) to \(store.storageURL(prefix: prefix))")
            #expect(process.lines.contains { $0.hasPrefix("posts-server storage copy: 2 objects so far: ") })
            #expect(process.lines.last == (run == 0
                ? "posts-server storage copy: done, 4 objects: 3 copied, 0 already there, 1 skipped (not this server's images)"
                : "posts-server storage copy: done, 4 objects: 0 copied, 3 already there, 1 skipped (not this server's images)"),
                "\(process.lines)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratchParent) == [])
        }
        #expect(try store.keys(under: prefix) == names.dropLast().sorted().map { "\(prefix)/\($0)" })
        #expect(try store.contents(of: "\(prefix)/\(names[1])") == Array("bytes of \(names[1])".utf8))
    }

    /// Credentials the store refuses: exit 1 at the first object, saying why and that a
    /// second run resumes.
    @Test func copy_withAWrongSecret_failsLoudly() throws {
        let store = try SeaweedStore.shared
        let prefix = SeaweedStore.makePrefix()
        let folder = ScratchDirectory.path("copy")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data("an image".utf8).write(to: URL(fileURLWithPath: folder + "/0123456789abcdef0123456789abcdef.jpg"))
        var environment = store.environment()
        environment["S3_SECRET_ACCESS_KEY"] = "wrong" + store.secretKey

        let process = try ServerProcess(["storage", "copy", "--from", "file://" + folder, "--to", store.storageURL(prefix: prefix)],
                                        environment: environment)
        #expect(process.waitForExit() == 1)
        let stopped = try #require(process.lines.last, "\(process.lines)")
        #expect(stopped.hasPrefix("posts-server storage copy: stopped after 0 objects (0 copied, 0 already there, 0 skipped "
                                  + "(not this server's images)): 0123456789abcdef0123456789abcdef.jpg: the object store refused"), "\(stopped)")
        #expect(stopped.contains("403") && stopped.hasSuffix(". Running the same command again resumes where it stopped"))
        #expect(!stopped.contains(store.secretKey))
        #expect(try store.keys(under: prefix) == [])
    }

    @Test func copy_withoutCredentialsOrWithABadURL_isAUsageError() throws {
        let store = try SeaweedStore.shared
        let noCredentials = try ServerProcess(["storage", "copy", "--from", "file:///tmp", "--to", store.storageURL()])
        #expect(try #require(noCredentials.waitForExit()) != 0)
        #expect(noCredentials.lines.contains { $0.contains("--to: S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required") })
        let badURL = try ServerProcess(["storage", "copy", "--from", "/srv/uploads", "--to", "file:///tmp/x"])
        #expect(try #require(badURL.waitForExit()) != 0)
        #expect(badURL.lines.contains { $0.contains("--from: STORAGE_URL must start with file:// or s3://") })
    }
}

/// A folder listed a few names a page, as a bucket lists, with the last name as the marker.
private struct PagedStore: ObjectStore {
    let folder: FileObjectStore
    let pageSize: Int

    func list(after marker: String?) throws(StorageFailure) -> (names: [String], next: String?) {
        let all = try folder.list(after: nil).names
        let rest = all.drop { marker != nil && $0 <= marker! }
        let page = Array(rest.prefix(pageSize))
        return (page, rest.count > pageSize ? page.last : nil)
    }

    func put(_ name: String, from path: String, contentType: String, ifAbsent: Bool) throws(StorageFailure) -> Bool {
        try folder.put(name, from: path, contentType: contentType, ifAbsent: ifAbsent)
    }
    func open(_ name: String, scratch: String) throws(StorageFailure) -> ObjectFile? { try folder.open(name, scratch: scratch) }
    func withLocalCopy<T>(of name: String, scratch: String, _ body: (String) throws -> T) throws -> T? {
        try folder.withLocalCopy(of: name, scratch: scratch, body)
    }
    func exists(_ name: String) throws(StorageFailure) -> Bool { try folder.exists(name) }
    func delete(_ names: [String]) throws(StorageFailure) { try folder.delete(names) }
    func probe() throws(StorageFailure) { try folder.probe() }
    func publicURL(of name: String) -> String? { nil }
    var isLocal: Bool { true }
}
