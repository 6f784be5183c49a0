import Foundation
import HTTP

/// API.md "The clock" and "Faults": `/api/dev/clock` and `/api/dev/faults`, trust mode only.
enum DevClockRoutes {
    private struct ClockInput: Decodable {
        let now: String?
        let frozen: Bool?
    }

    private struct AdvanceInput: Decodable {
        let seconds: Double?
    }

    static func register(on routes: inout RouteTable, clock: DevClock, faults: DevFaults) {
        routes.get("/api/dev/clock", access: .open) { _, _ in clock.answer() }
        routes.put("/api/dev/clock", access: .open, body: .collect(limit: 4096)) { request, _ in
            let input = try RequestFields.decode(ClockInput.self, from: request)
            let now = try input.now.map { text throws(APIError) -> Date in
                guard let date = Timestamp.parse(text) else {
                    throw APIError.invalid("now must be an RFC 3339 time such as 2030-01-01T00:00:00Z")
                }
                return date
            }
            guard now != nil || input.frozen != nil else { throw APIError.invalid("give now, frozen or both") }
            try clock.set(now: now, frozen: input.frozen)
            return clock.answer()
        }
        routes.post("/api/dev/clock/advance", access: .open, body: .collect(limit: 4096)) { request, _ in
            let input = try RequestFields.decode(AdvanceInput.self, from: request)
            guard let seconds = input.seconds, seconds.isFinite, abs(seconds) <= 100 * 365 * 86400 else {
                throw APIError.invalid("seconds must be a number (at most a century either way)")
            }
            try clock.advance(seconds: seconds)
            return clock.answer()
        }
        routes.delete("/api/dev/clock", access: .open) { _, _ in
            try clock.reset()
            return clock.answer()
        }

        routes.post("/api/dev/faults", access: .open, body: .collect(limit: 16 * 1024)) { request, _ in
            let fault = try faults.create(Fault(RequestFields.decode(Fault.Input.self, from: request)))
            var answer = JSONObject.success()
            answer.add("fault", fault.json)
            return answer.response(status: .created)
        }
        routes.get("/api/dev/faults", access: .open) { _, _ in
            var answer = JSONObject.success()
            answer.add("faults", try faults.list().map(\.json))
            return answer.response()
        }
        routes.delete("/api/dev/faults/:id", access: .open) { _, context in
            guard let id = Int64(context.parameters["id"] ?? ""), id > 0 else { throw APIError.notFound("no such fault") }
            guard try faults.delete(id) else { throw APIError.notFound("no such fault") }
            return Response(status: .noContent)
        }
        routes.delete("/api/dev/faults", access: .open) { _, _ in
            try faults.delete(nil)
            return Response(status: .noContent)
        }
    }
}
