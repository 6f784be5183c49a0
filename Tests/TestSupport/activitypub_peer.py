"""An independent ActivityPub server for the federation tests (Tests/TestSupport/TestActivityPubPeer.swift).

One actor, served as Mastodon serves one (WebFinger, a Person with an RSA key, an inbox and
the shared inbox), whose HTTP Signatures are bovine's (https://codeberg.org/bovine/bovine),
not the server's: every request it sends is signed by bovine.clients.signed_http_methods,
every request it receives is checked by bovine.crypto's verifier against the key it fetches
(a signed GET, as Mastodon's secure mode needs). What it received is appended to a JSON
Lines file with the verdict; a Follow it receives it accepts. The test drives it through
POST /control/send (an activity to sign and post to an inbox).

Usage: activitypub_peer.py --ready FILE --records FILE --username NAME
"""

import argparse
import asyncio
import json
import logging
import os
import signal

import aiohttp
from aiohttp import web
from bovine.clients.signed_http_methods import signed_get, signed_post
from bovine.crypto import build_validate_http_signature_raw, generate_rsa_public_private_key
from bovine.crypto.helper import content_digest_sha256
from bovine.crypto.types import CryptographicIdentifier, CryptographicSecret

AS_CONTEXT = ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"]
ACTIVITY_JSON = "application/activity+json"


def mastodon_digest(body: bytes):
    return "digest", content_digest_sha256(body, prefix="SHA-256")


class Peer:
    def __init__(self, username: str, records: str):
        self.username = username
        self.records = records
        self.origin = ""
        self.public_pem, private_pem = generate_rsa_public_private_key()
        self.private_pem = private_pem
        self.counter = 0
        self.session: aiohttp.ClientSession | None = None

    @property
    def actor_id(self):
        return f"{self.origin}/users/{self.username}"

    @property
    def secret(self):
        return CryptographicSecret.from_pem(f"{self.actor_id}#main-key", self.private_pem)

    def record(self, entry: dict):
        with open(self.records, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")

    async def fetch_key(self, key_id: str):
        """The key an inbox request names: its actor fetched with our signature."""
        response = await signed_get(self.session, self.secret, key_id.split("#")[0],
                                    headers={"accept": ACTIVITY_JSON})
        if response.status != 200:
            return None
        document = await response.json(content_type=None)
        key = document.get("publicKey", document)
        if key.get("id") != key_id:
            return None
        return CryptographicIdentifier.from_public_key(key)

    async def post(self, inbox: str, activity: dict):
        body = json.dumps({"@context": AS_CONTEXT, **activity})
        response = await signed_post(self.session, self.secret, inbox, body, digest_method=mastodon_digest)
        return response.status, await response.text()

    # The server's side of it.

    async def webfinger(self, request):
        resource = request.query.get("resource", "")
        domain = self.origin.split("://", 1)[1]
        if resource not in (f"acct:{self.username}@{domain}", self.actor_id):
            return web.json_response({"error": "not found"}, status=404)
        return web.json_response({
            "subject": f"acct:{self.username}@{domain}",
            "links": [{"rel": "self", "type": ACTIVITY_JSON, "href": self.actor_id}],
        }, content_type="application/jrd+json")

    async def actor(self, request):
        if request.match_info["name"] != self.username:
            return web.json_response({"error": "not found"}, status=404)
        return web.json_response({
            "@context": AS_CONTEXT, "id": self.actor_id, "type": "Person", "preferredUsername": self.username,
            "name": "Peer of bovine", "summary": "<p>An independent implementation</p>",
            "inbox": f"{self.actor_id}/inbox", "outbox": f"{self.actor_id}/outbox",
            "followers": f"{self.actor_id}/followers", "following": f"{self.actor_id}/following",
            "endpoints": {"sharedInbox": f"{self.origin}/inbox"},
            "publicKey": {"id": f"{self.actor_id}#main-key", "owner": self.actor_id, "publicKeyPem": self.public_pem},
        }, content_type=ACTIVITY_JSON)

    async def inbox(self, request):
        body = await request.read()

        async def read_body():
            return body

        validate = build_validate_http_signature_raw(self.fetch_key)
        # bovine reads header names lowercased (Quart's headers are case-insensitive).
        headers = {name.lower(): value for name, value in request.headers.items()}
        owner = await validate(request.method, str(request.url), headers, read_body)
        try:
            activity = json.loads(body)
        except ValueError:
            activity = None
        verified = owner is not None and isinstance(activity, dict) and activity.get("actor") == owner
        self.record({"path": request.path, "verified": verified, "owner": owner, "activity": activity})
        if not verified:
            return web.json_response({"error": "signature"}, status=401)
        if activity.get("type") == "Follow" and activity.get("object") == self.actor_id:
            asyncio.get_running_loop().create_task(self.accept(activity))
        return web.Response(status=202)

    async def accept(self, follow: dict):
        response = await signed_get(self.session, self.secret, follow["actor"], headers={"accept": ACTIVITY_JSON})
        follower = await response.json(content_type=None)
        self.counter += 1
        status, text = await self.post(follower["inbox"], {
            "id": f"{self.actor_id}#accepts/{self.counter}", "type": "Accept", "actor": self.actor_id, "object": follow,
        })
        self.record({"sent": "Accept", "status": status, "answer": text})

    async def send(self, request):
        order = await request.json()
        status, text = await self.post(order["inbox"], order["activity"])
        return web.json_response({"status": status, "body": text})


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ready", required=True)
    parser.add_argument("--records", required=True)
    parser.add_argument("--username", default="peer")
    arguments = parser.parse_args()
    # bovine's reasons for refusing a signature, in the log the test shows on a failure.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    peer = Peer(arguments.username, arguments.records)
    peer.session = aiohttp.ClientSession()
    app = web.Application(client_max_size=2 * 1024 * 1024)
    app.router.add_get("/.well-known/webfinger", peer.webfinger)
    app.router.add_get("/users/{name}", peer.actor)
    app.router.add_post("/users/{name}/inbox", peer.inbox)
    app.router.add_post("/inbox", peer.inbox)
    app.router.add_post("/control/send", peer.send)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    peer.origin = f"http://127.0.0.1:{port}"
    with open(arguments.ready + ".tmp", "w") as ready:
        ready.write(str(port))
    os.replace(arguments.ready + ".tmp", arguments.ready)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for name in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(name, stop.set)
    await stop.wait()
    await peer.session.close()
    await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
