import Foundation
import HTTP

/// API.md "Actors": `GET /users/<username>` and `/ap/users/<id>` (an actor's id, which a
/// rename leaves alone) → the `Person`; its `outbox`, `followers` and `following`; the
/// instance actor at `/actor`; a post at `/posts/<id>` and a comment at `/comments/<id>`
/// as a `Note`, or a `Tombstone` with `410` once deleted.
enum ActorRoutes {
    static func register(on routes: inout RouteTable, actors: ActorDocuments, collections: ActorCollections,
                         notes: NoteDocuments, settings: FederationSettings) {
        routes.get("/users/:username", access: .open) { _, context in
            let name = try context.parameters.require("username", as: String.self)
            guard let person = try actors.person(.username(name)) else { throw APIError.notFound("no such account here") }
            return ActivityPub.response(person)
        }
        routes.get("/ap/users/:id", access: .open) { _, context in
            let id = try context.parameters.require("id", as: Int64.self)
            guard let person = try actors.person(.id(id)) else { throw APIError.notFound("no such account here") }
            return ActivityPub.response(person)
        }
        for kind in ActorCollections.Kind.allCases {
            routes.get("/ap/users/:id/\(kind.rawValue)", access: .open) { request, context in
                let id = try context.parameters.require("id", as: Int64.self)
                let cursor = try request.query["cursor"].map { text throws(APIError) in try KeysetCursor(text) }
                let page = request.query["page"] != nil || cursor != nil
                guard let document = try collections.collection(kind, of: id, page: page, cursor: cursor) else {
                    throw APIError.notFound("no such account here")
                }
                return ActivityPub.response(document)
            }
        }
        routes.get("/actor", access: .open) { _, _ in
            ActivityPub.response(try actors.instanceActor(domain: settings.domain))
        }
        routes.get("/posts/:id", access: .open) { _, context in
            try answer(notes.post(try context.parameters.require("id", as: Int64.self)))
        }
        routes.get("/comments/:id", access: .open) { _, context in
            guard let id = UUID(uuidString: try context.parameters.require("id", as: String.self)) else {
                throw APIError.notFound("no such comment")
            }
            return try answer(notes.comment(id))
        }
    }

    private static func answer(_ found: NoteDocuments.Found?) throws -> Response {
        switch found {
        case .note(let note)?: ActivityPub.response(note)
        case .tombstone(let tombstone)?: ActivityPub.response(tombstone, status: .gone)
        case nil: throw APIError.notFound("no such object here")
        }
    }
}
