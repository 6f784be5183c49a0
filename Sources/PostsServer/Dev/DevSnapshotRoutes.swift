import HTTP

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
