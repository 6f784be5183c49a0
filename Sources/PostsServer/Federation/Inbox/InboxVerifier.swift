import Foundation
import HTTP

/// Whose an inbox request is (API.md "In"): a draft-cavage signature covering
/// `(request-target)`, `host`, `date` and `digest`, a `Date` within an hour, a `Digest` of
/// the body, checked against the signer's key: fetched when unknown, fetched again once
/// when the signature fails (a rotated key), at most once a minute per actor. What is
/// refused is refused before any fetch when the request alone shows it.
struct InboxVerifier: Sendable {
    let actors: RemoteActors

    enum Refusal: Error {
        case unsigned(String)
        case forged(String)
        case blocked(String)
    }

    func signer(of request: Request) throws(Refusal) -> RemoteActors.Actor {
        guard let header = request.headers["signature"] else { throw .unsigned("the request is not signed (no Signature header)") }
        let signature: HTTPSignature
        do {
            signature = try HTTPSignature(parsing: header)
        } catch {
            throw .unsigned("the Signature header is malformed: \(error)")
        }
        // Everything but the key first: no fetch for a request that fails without it.
        switch check(signature, request, publicKeyPEM: "") {
        case nil, .key?: break
        case let refusal?: throw .forged(refusal.description)
        }
        var actor: RemoteActors.Actor
        do {
            actor = try actors.actor(byKeyID: signature.keyID)
        } catch RemoteActors.Failure.blocked(let domain) {
            throw .blocked("\(domain) is blocked here")
        } catch {
            throw .forged("the signer's key could not be had: \(error)")
        }
        guard actor.keyID == signature.keyID else { throw .forged("\(signature.keyID) is not \(actor.uri)'s key") }
        guard let refusal = check(signature, request, publicKeyPEM: actor.publicKeyPEM) else { return actor }
        // A rotated key: the actor once more, at most once a minute.
        guard case .mismatch = refusal, let fresh = try? actors.refetched(actor), fresh.keyID == signature.keyID,
              check(signature, request, publicKeyPEM: fresh.publicKeyPEM) == nil else {
            throw .forged(refusal.description)
        }
        actor = fresh
        return actor
    }

    private func check(_ signature: HTTPSignature, _ request: Request, publicKeyPEM: String) -> RequestSigning.Refusal? {
        do {
            try RequestSigning.verify(signature, method: request.method.rawValue, target: request.head.target, body: request.body,
                                      publicKeyPEM: publicKeyPEM, now: Int64(Date().timeIntervalSince1970)) { name in
                request.headers.values(of: name)
            }
            return nil
        } catch {
            return error
        }
    }
}
