import HTTP
import Locking
import Synchronization

/// API.md "Snapshots": `/api/dev/snapshots`, trust mode only (`DevSnapshots`).
enum DevSnapshotRoutes {
    private struct NameInput: Decodable {
        let name: String?
    }

    static func register(on routes: inout RouteTable, snapshots: DevSnapshots) {
        routes.post("/api/dev/snapshots", access: .open, body: .collect(limit: 4096)) { request, _ in
            let name = try DevSnapshots.validated(RequestFields.decode(NameInput.self, from: request).name)
            var answer = JSONObject.success()
            answer.add("snapshot", try snapshots.save(name).json)
            return answer.response(status: .created)
        }
        routes.get("/api/dev/snapshots", access: .open) { _, _ in
            var answer = JSONObject.success()
            answer.add("snapshots", try snapshots.list().map(\.json))
            return answer.response()
        }
        routes.delete("/api/dev/snapshots/:name", access: .open) { _, context in
            let name = try DevSnapshots.validated(context.parameters["name"])
            guard try snapshots.delete(name) else { throw APIError.notFound("no snapshot named \(name)") }
            return Response(status: .noContent)
        }
        routes.post("/api/dev/snapshots/:name/restore", access: .open) { _, context in
            let name = try DevSnapshots.validated(context.parameters["name"])
            try snapshots.restore(name)
            var answer = JSONObject.success()
            if let summary = try snapshots.list().first(where: { $0.name == name }) { answer.add("snapshot", summary.json) }
            return answer.response()
        }
    }
}

/// What an instance does when a snapshot was restored, by it or by another instance on the
/// database: its caches of rows drop what they hold and its event streams end. Each part
/// registers here; `fire` runs them all, once per restore (`DevState` tells restores apart
/// by their count).
final class RestoreObservers: Sendable {
    private let observers = ParkingLock<[@Sendable () -> Void]>([])
    private let seen = Atomic<Int64>(0)

    func add(_ observer: @escaping @Sendable () -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// Runs the observers if `generation` (the database's count of restores) is one this
    /// instance has not acted on yet.
    func fire(generation: Int64) {
        var known = seen.load(ordering: .relaxed)
        while known < generation {
            let (exchanged, original) = seen.compareExchange(expected: known, desired: generation, ordering: .acquiringAndReleasing)
            if exchanged {
                for observer in observers.withLock({ $0 }) { observer() }
                return
            }
            known = original
        }
    }

    /// The count as first read at start: restores before it are none of this instance's.
    func start(at generation: Int64) {
        seen.store(generation, ordering: .relaxed)
    }
}
