import Foundation
import Postgres
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct LocalClusterTests {
    /// The postmaster outlives the pg_ctl that started it. Whatever descriptors it inherited
    /// from us stay open as long as it runs: a pipe someone reads to its end would never end.
    /// Linux only: it reads the postmaster's descriptors from /proc (Darwin has no /proc).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd")))
    func postmaster_inheritsNoneOfOurDescriptors() throws {
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)  // deliberately not close-on-exec
        defer { fds.forEach { close($0) } }
        var info = stat()
        try #require(fstat(fds[1], &info) == 0)
        let ourPipe = "pipe:[\(info.st_ino)]"

        let cluster = try TestDatabase.startThrowawayCluster()
        let pidFile = try String(contentsOf: cluster.dataDirectory.appendingPathComponent("postmaster.pid"), encoding: .utf8)
        let postmaster = try #require(pidFile.split(separator: "\n").first.flatMap { Int32($0) })
        let descriptorDirectory = "/proc/\(postmaster)/fd"
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: descriptorDirectory)
        #expect(!descriptors.isEmpty)
        for descriptor in descriptors {
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(descriptorDirectory)/\(descriptor)")
            #expect(target != ourPipe, "the postmaster holds our pipe as descriptor \(descriptor)")
        }
    }
}
