import Foundation
import HTTP
import Postgres

/// API.md "In": `POST /users/<username>/inbox`, `POST /ap/users/<id>/inbox` (what our
/// actors advertise) and the shared `POST /inbox`. A body of at most 1 MiB (else `413`),
/// signed by its actor (else `401`, nothing stored), applied (`InboxActivities`) and
/// answered `202`; a domain blocked here `403`; more than the inbox's share of the
/// server at once `429` (`InboxGate`).
enum InboxRoutes {
    static let maxBodyBytes = 1 << 20

    struct Inbox: Sendable {
        let verifier: InboxVerifier
        let activities: InboxActivities
        let gate: InboxGate
        let metrics: FederationMetrics
        let pool: ConnectionPool
        let clock: ServerClock
    }

    static func register(on routes: inout RouteTable, inbox: Inbox) {
        let handler: RouteTable.Handler = { request, _ in
            guard let answer = try inbox.gate.run({ try receive(request, inbox: inbox) }) else {
                inbox.metrics.count(.busy)
                throw APIError(.tooManyRequests, "the inbox is busy; try again shortly", retryAfter: 5)
            }
            return answer
        }
        for path in ["/inbox", "/ap/users/:id/inbox", "/users/:username/inbox"] {
            routes.post(path, access: .open, body: .collect(limit: maxBodyBytes), handler)
        }
    }

    private static func receive(_ request: Request, inbox: Inbox) throws -> Response {
        let signer: RemoteActors.Actor
        do {
            signer = try inbox.verifier.signer(of: request)
        } catch .unsigned(let why) {
            inbox.metrics.count(.unsigned)
            throw APIError(.unauthenticated, why)
        } catch .forged(let why) {
            inbox.metrics.count(.forged)
            throw APIError(.unauthenticated, why)
        } catch .blocked(let why) {
            inbox.metrics.count(.blocked)
            throw APIError.forbidden(why)
        }
        // Suspended here: as a local account, it may do nothing (API.md "Safety").
        guard !signer.suspended else {
            inbox.metrics.count(.blocked)
            throw APIError.forbidden("this account is suspended here")
        }
        guard let activity = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any] else {
            inbox.metrics.count(.malformed)
            throw APIError.malformed("the body is not a JSON object")
        }
        // Signed by one actor, about another: a forgery (relayed activities are not taken).
        guard InboxActivities.id(activity["actor"]) == signer.uri else {
            inbox.metrics.count(.forged)
            throw APIError(.unauthenticated, "the activity's actor is not its signer")
        }
        // The host answers: deliveries to it go on (`FederationDelivery`).
        try inbox.pool.withConnection { connection in
            try connection.query("UPDATE federation_hosts SET failing_since = NULL WHERE domain = \(signer.domain) AND failing_since IS NOT NULL")
        }
        let outcome: InboxActivities.Outcome
        do {
            outcome = try inbox.activities.apply(activity, from: signer)
        } catch let malformed as InboxActivities.Malformed {
            inbox.metrics.count(.malformed)
            throw APIError.malformed(malformed.description)
        }
        switch outcome {
        case .applied: inbox.metrics.count(.accepted)
        case .duplicate: inbox.metrics.count(.duplicate)
        case .ignored: inbox.metrics.count(.ignored)
        }
        return Response(status: HTTPStatus(202, "Accepted"))
    }
}
