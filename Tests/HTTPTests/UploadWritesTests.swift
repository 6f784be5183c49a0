import Foundation
import Synchronization
import Testing
import TestSupport
@testable import HTTP

/// Upload files are written by the upload writers, in order, and a body's backlog of
/// unwritten bytes tells its connection when to stop reading and when to go on.
@Suite struct UploadWritesTests {
    private final class Wakes: Sendable {
        let count = Atomic<Int>(0)
        var wake: @Sendable () -> Void { { self.count.add(1, ordering: .relaxed) } }
    }

    @Test func aBacklogOverItsLimit_wakesItsConnectionOnceDrained() {
        let writes = UploadWrites(), wakes = Wakes()
        #expect(!writes.isBehind(limit: 0, wake: wakes.wake))
        writes.queued(100)
        #expect(writes.isBehind(limit: 50, wake: wakes.wake))
        writes.done(40, failed: false)
        #expect(wakes.count.load(ordering: .relaxed) == 0)
        writes.done(10, failed: false)
        #expect(wakes.count.load(ordering: .relaxed) == 1)
        writes.done(50, failed: false)
        #expect(wakes.count.load(ordering: .relaxed) == 1 && !writes.isBehind(limit: 0, wake: wakes.wake))
        #expect(!writes.hasFailed)
    }

    @Test func chunks_areWrittenInOrder_andTheFileClosedBeforeTheBacklogEmpties() throws {
        let path = ScratchDirectory.path("upload-writes")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        try #require(descriptor >= 0)
        let writes = UploadWrites(), wakes = Wakes()
        let file = UploadFile(descriptor: descriptor, writes: writes)
        var expected: [UInt8] = []
        for index in 0..<200 {
            let chunk = [UInt8](repeating: UInt8(index), count: 1000 + index)
            expected += chunk
            file.append(chunk)
        }
        file.close()
        if writes.isBehind(limit: 0, wake: wakes.wake) { _ = eventually { wakes.count.load(ordering: .relaxed) == 1 } }
        #expect(!writes.isBehind(limit: 0, wake: wakes.wake))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(expected))
        // Closed: the descriptor no longer refers to the file. (Its number may already
        // name another test's file, running in parallel: on Linux, ask what it points to.)
        #if os(Linux)
        let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
        #expect(target != path)
        #else
        #expect(fcntl(descriptor, F_GETFD) == -1)
        #endif
    }

    @Test func anAbandonedUpload_leavesNoFile_evenWithWritesUnderWay() throws {
        let folder = ScratchDirectory.path("upload-writes")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let writes = UploadWrites(), wakes = Wakes()
        do {
            let upload = try TemporaryUpload(directory: folder, writes: writes)
            for _ in 0..<50 { try upload.write([UInt8](repeating: 7, count: 64 * 1024)[...]) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        if writes.isBehind(limit: 0, wake: wakes.wake) { _ = eventually { wakes.count.load(ordering: .relaxed) == 1 } }
        #expect(!writes.isBehind(limit: 0, wake: wakes.wake))
    }
}
