import CLinux
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Postgres
import Testing
import TestSupport

@Suite struct ConnectionPoolTests {
    private func makePool(size: Int = 2, checkoutTimeout: Duration = .seconds(3)) throws -> ConnectionPool {
        try PoolFixtures.makePool(size: size) { $0.checkoutTimeout = checkoutTimeout }
    }

    @Test func exhaustedPool_timesOutInsteadOfQueueingForever() throws {
        let pool = try makePool(size: 1, checkoutTimeout: .milliseconds(200))
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        DispatchQueue.global().async(group: done) {
            _ = try? pool.withConnection { _ in
                holding.signal()
                release.wait()
            }
        }
        try #require(holding.wait(timeout: .now() + 30) == .success)
        #expect(pool.statistics.inUse == 1)
        let error = #expect(throws: PostgresError.self) { try pool.withConnection { _ in } }
        #expect(error?.kind == .poolTimeout)
        #expect(error?.isUnavailable == true)
        release.signal()
        done.wait()
        try pool.withConnection { _ in }
        #expect(pool.statistics == ConnectionPool.Statistics(inUse: 0, idle: 1, waiting: 0))
    }

    @Test func unreachableServer_failsFastAsUnavailable() throws {
        let pool = ConnectionPool(ConnectionPool.Configuration(conninfo: "host=/nonexistent port=1 user=x dbname=x", size: 1))
        let error = #expect(throws: PostgresError.self) { try pool.withConnection { _ in } }
        #expect(error?.kind == .connectionFailed)
        #expect(error?.isUnavailable == true)
    }
}

/// Stops and restarts a cluster of its own: the shared one serves the other tests.
@Suite struct DatabaseOutageTests {
    @Test func pool_reportsUnavailableWhileDown_andRecoversWhenBack() throws {
        let cluster = try TestDatabase.startThrowawayCluster()
        let pool = ConnectionPool(ConnectionPool.Configuration(conninfo: cluster.conninfo(), size: 2))
        #expect(try pool.withConnection { try $0.query("SELECT 1 AS one").first!.decode("one", as: Int.self) } == 1)

        try cluster.stop()
        let started = ContinuousClock.now
        let error = #expect(throws: PostgresError.self) { try pool.withConnection { try $0.query("SELECT 1 AS one") } }
        #expect(error?.isUnavailable == true)
        #expect(ContinuousClock.now - started < .seconds(5))

        try cluster.start()
        #expect(try pool.withConnection { try $0.query("SELECT 1 AS one").first!.decode("one", as: Int.self) } == 1)
    }
}

/// A database that accepts TCP connections and never says a word: what a frozen server
/// (or a black-holed network) looks like to libpq.
private final class SilentListener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = clinux_socket_blocking(AF_INET)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        listen(fd, 128)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}

@Suite struct FrozenDatabaseTests {
    @Test func whileDown_oneRequestProbesAndTheRestFailAtOnce() throws {
        let silent = try SilentListener()
        var configuration = ConnectionPool.Configuration(
            conninfo: "host=127.0.0.1 port=\(silent.port) user=x dbname=x", size: 4)
        configuration.connectTimeout = .seconds(1)
        let pool = ConnectionPool(configuration)

        let first = #expect(throws: PostgresError.self) { try pool.withConnection { _ in } }
        #expect(first?.isUnavailable == true)
        #expect(pool.isDatabaseDown)

        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 20) { _ in
            do {
                try pool.withConnection { _ in }
            } catch let error as PostgresError {
                failures.withLock { $0.append(error.isUnavailable ? error.details : "not unavailable: \(error)") }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        let details = failures.withLock { $0 }
        #expect(details.count == 20)
        #expect(details.filter { $0.contains("another request is probing") }.count >= 15)
        #expect(details.allSatisfy { !$0.hasPrefix("not unavailable") })
    }
}
