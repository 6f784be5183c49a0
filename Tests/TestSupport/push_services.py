"""Local stand-ins for Apple's, Google's and the browsers' push services, for the direct
push tests (Tests/TestSupport/TestPushServices.swift starts it). Each follows its
provider's documents, over TLS with HTTP/2 (ALPN h2) on one loopback port:

- APNs: POST /3/device/<token>. The provider token (ES256 JWT, kid and iss) is verified
  against the auth key's public half; apns-topic, apns-push-type and a payload of at most
  4 KiB with "aps" are required. A token declared expired (403 ExpiredProviderToken) is
  refused again if sent again, as Apple does.
- FCM: POST /token trades a service account's RS256 assertion (iss, scope, aud, iat, exp
  checked against its public key) for an access token; POST
  /v1/projects/<project>/messages:send takes a message with that bearer token.
- Web Push: POST /wp/<n> checks VAPID (RFC 8292: the JWT verified with the k= key, aud
  this origin, exp within a day, sub mailto:/https:), TTL and Content-Encoding, and
  decrypts the body with http_ece (an independent RFC 8291 implementation) using the
  subscription's private key, which only this process knows.

At start it writes into --dir: a CA (ca.pem, for PUSH_CA_FILE) and the server's certificate
signed by it, an APNs auth key (apns.p8), a service account (fcm.json, its token_uri here),
a VAPID key (vapid.pem) and Web Push subscriptions (subscriptions.json); then, once
listening, the port to `ready`. Every request it accepts or refuses is appended to
records.jsonl as one JSON line (service, connection, stream, token, status, the decoded
payload). A rules file (rules.json, a list) makes it answer the next matching requests
with a given status: {"service", "token"?, "status", "reason"?, "retry_after"?, "count"}.
"""
import argparse
import asyncio
import base64
import datetime
import itertools
import json
import os
import secrets
import ssl
import threading
import time
import urllib.parse

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
import http_ece
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, utils
from cryptography.x509.oid import NameOID

parser = argparse.ArgumentParser()
parser.add_argument("--dir", required=True)
parser.add_argument("--port", type=int, default=0)
parser.add_argument("--subscriptions", type=int, default=4)
parser.add_argument("--access-token-lifetime", type=int, default=3600)
options = parser.parse_args()
directory = options.dir


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def write(name, data, mode="wb"):
    path = os.path.join(directory, name)
    with open(path + ".tmp", mode) as file:
        file.write(data)
    os.replace(path + ".tmp", path)
    return path


def pem_private(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


# --- Keys and certificates (made once; kept when the fake is started again) ------------

def make_material():
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "posts-server test push CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
          .not_valid_after(now + datetime.timedelta(days=2))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    server_key = ec.generate_private_key(ec.SECP256R1())
    import ipaddress
    server = (x509.CertificateBuilder()
              .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
              .issuer_name(ca_name).public_key(server_key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=2))
              .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                          x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
              .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
              .sign(ca_key, hashes.SHA256()))
    write("ca.pem", ca.public_bytes(serialization.Encoding.PEM))
    write("server.pem", server.public_bytes(serialization.Encoding.PEM))
    write("server-key.pem", pem_private(server_key))
    write("apns.p8", pem_private(ec.generate_private_key(ec.SECP256R1())))
    write("fcm-key.pem", pem_private(rsa.generate_private_key(public_exponent=65537, key_size=2048)))
    write("vapid.pem", pem_private(ec.generate_private_key(ec.SECP256R1())))
    subscribers = []
    for _ in range(options.subscriptions):
        key = ec.generate_private_key(ec.SECP256R1())
        subscribers.append({"private": pem_private(key).decode(), "auth": b64url(secrets.token_bytes(16))})
    write("subscribers.json", json.dumps(subscribers), "w")


if not os.path.exists(os.path.join(directory, "subscribers.json")):
    make_material()


def load_private(name):
    with open(os.path.join(directory, name), "rb") as file:
        return serialization.load_pem_private_key(file.read(), password=None)


apns_public = load_private("apns.p8").public_key()
fcm_key = load_private("fcm-key.pem")
with open(os.path.join(directory, "subscribers.json")) as file:
    subscribers = json.load(file)
for subscriber in subscribers:
    subscriber["key"] = serialization.load_pem_private_key(subscriber["private"].encode(), password=None)

APNS_KEY_ID = "ABC123DEFG"
APNS_TEAM_ID = "DEF123GHIJ"
APNS_TOPIC = "app.posts.test"
FCM_PROJECT = "posts-test"
FCM_EMAIL = "push@posts-test.iam.gserviceaccount.com"
FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging"

# --- Records and rules ---------------------------------------------------------------

lock = threading.Lock()
records_path = os.path.join(directory, "records.jsonl")
rules_path = os.path.join(directory, "rules.json")
records_file = open(records_path, "a")


def record(entry):
    """Appended at once; flushed when the connection's input is handled (`flush_records`),
    so that a burst of streams costs one write."""
    with lock:
        records_file.write(json.dumps(entry) + "\n")


def flush_records():
    with lock:
        records_file.flush()


def take_rule(service, token):
    """The first live rule for this request, one of its turns used (written back)."""
    with lock:
        if not os.path.exists(rules_path):
            return None
        try:
            with open(rules_path) as file:
                rules = json.load(file)
        except ValueError:
            return None
        for rule in rules:
            if rule.get("service") == service and rule.get("count", 0) > 0 and rule.get("token") in (None, token):
                rule["count"] -= 1
                write("rules.json", json.dumps(rules), "w")
                return rule
        return None


# --- JWTs --------------------------------------------------------------------------------

class Refused(Exception):
    def __init__(self, status, reason, headers=()):
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.headers = list(headers)


def split_jwt(token):
    try:
        header, claims, signature = token.split(".")
        return (json.loads(unb64url(header)), json.loads(unb64url(claims)), unb64url(signature),
                (header + "." + claims).encode())
    except (ValueError, TypeError):
        raise Refused(403, "InvalidProviderToken")


def verify_es256(public_key, signature, signing_input):
    if len(signature) != 64:
        return False
    der = utils.encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    try:
        public_key.verify(der, signing_input, ec.ECDSA(hashes.SHA256()))
        return True
    except Exception:
        return False


expired_provider_tokens = set()
# Provider tokens whose signature verified (Apple, too, verifies a token once and caches it).
verified_provider_tokens = {}
issued_access_tokens = {}  # token -> expiry (epoch seconds)


def check_provider_token(headers):
    value = headers.get("authorization", "")
    if not value.lower().startswith("bearer "):
        raise Refused(403, "MissingProviderToken")
    token = value[7:]
    if token in expired_provider_tokens:
        raise Refused(403, "ExpiredProviderToken")
    if token in verified_provider_tokens:
        claims = verified_provider_tokens[token]
        if abs(time.time() - claims["iat"]) > 3600:
            raise Refused(403, "ExpiredProviderToken")
        return token, claims
    header, claims, signature, signing_input = split_jwt(token)
    if header.get("alg") != "ES256" or header.get("kid") != APNS_KEY_ID or claims.get("iss") != APNS_TEAM_ID:
        raise Refused(403, "InvalidProviderToken")
    if not verify_es256(apns_public, signature, signing_input):
        raise Refused(403, "InvalidProviderToken")
    if not isinstance(claims.get("iat"), int) or abs(time.time() - claims["iat"]) > 3600:
        raise Refused(403, "ExpiredProviderToken")
    verified_provider_tokens[token] = claims
    return token, claims


def check_assertion(form):
    if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
        raise Refused(400, "unsupported_grant_type")
    try:
        header, claims, signature, signing_input = split_jwt(form.get("assertion", ""))
    except Refused:
        raise Refused(400, "invalid_grant")
    if header.get("alg") != "RS256":
        raise Refused(400, "invalid_grant")
    try:
        fcm_key.public_key().verify(signature, signing_input, padding.PKCS1v15(), hashes.SHA256())
    except Exception:
        raise Refused(400, "invalid_grant")
    now = time.time()
    if (claims.get("iss") != FCM_EMAIL or claims.get("scope") != FCM_SCOPE or claims.get("aud") != token_uri
            or not claims.get("iat", 0) - 60 <= now <= claims.get("exp", 0) or claims["exp"] - claims["iat"] > 3600):
        raise Refused(400, "invalid_grant")


def check_vapid(headers):
    value = headers.get("authorization", "")
    if not value.startswith("vapid "):
        raise Refused(401, "no VAPID authorization")
    parts = dict(part.strip().split("=", 1) for part in value[6:].split(",") if "=" in part)
    header, claims, signature, signing_input = split_jwt(parts.get("t", ""))
    try:
        key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(parts.get("k", "")))
    except ValueError:
        raise Refused(401, "k is not a P-256 key")
    if header.get("alg") != "ES256" or not verify_es256(key, signature, signing_input):
        raise Refused(401, "the VAPID signature does not verify")
    if claims.get("aud") != origin:
        raise Refused(401, "aud is not this push service's origin")
    if not time.time() < claims.get("exp", 0) <= time.time() + 24 * 3600:
        raise Refused(401, "exp is past or more than a day away")
    if not str(claims.get("sub", "")).startswith(("mailto:", "https:")):
        raise Refused(401, "sub is not a contact")
    return parts["k"]


# --- The services --------------------------------------------------------------------------

def ruled(service, token):
    rule = take_rule(service, token)
    if rule is None:
        return None
    headers = [("retry-after", str(rule["retry_after"]))] if "retry_after" in rule else []
    if service == "apns":
        body = json.dumps({"reason": rule.get("reason", "InternalServerError")})
    elif service == "fcm":
        reason = rule.get("reason", "INTERNAL")
        message = rule.get("message", "The registration token is not a valid FCM registration token"
                           if reason == "INVALID_ARGUMENT" else reason)
        body = json.dumps({"error": {"code": rule["status"], "message": message, "status": reason,
                                     "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError",
                                                  "errorCode": reason}]}})
    else:
        body = ""
    return rule["status"], headers, body.encode()


def apns(headers, body, token, entry):
    jwt, claims = check_provider_token(headers)
    entry["jwt"] = jwt
    answer = ruled("apns", token)
    if answer and answer[0] == 403 and b"ExpiredProviderToken" in answer[2]:
        expired_provider_tokens.add(jwt)
    if answer:
        return answer
    if headers.get("apns-topic") != APNS_TOPIC:
        raise Refused(400, "DeviceTokenNotForTopic" if headers.get("apns-topic") else "MissingTopic")
    if headers.get("apns-push-type") != "alert":
        raise Refused(400, "InvalidPushType")
    if len(body) > 4096:
        raise Refused(413, "PayloadTooLarge")
    try:
        payload = json.loads(body)
        assert isinstance(payload.get("aps"), dict)
    except Exception:
        raise Refused(400, "PayloadEmpty")
    entry["payload"] = payload
    entry["headers"] = {k: v for k, v in headers.items() if k.startswith("apns-")}
    return 200, [("apns-id", "%08X-0000-0000-0000-000000000000" % entry["stream"])], b""


def fcm_token(body, entry):
    form = dict(urllib.parse.parse_qsl(body.decode()))
    try:
        check_assertion(form)
    except Refused as refused:
        return refused.status, [], json.dumps({"error": refused.reason}).encode()
    answer = ruled("token", None)
    if answer:
        return answer
    access = "ya29." + secrets.token_urlsafe(24)
    issued_access_tokens[access] = time.time() + options.access_token_lifetime
    entry["access_token"] = access
    return 200, [("content-type", "application/json")], json.dumps(
        {"access_token": access, "expires_in": options.access_token_lifetime, "token_type": "Bearer"}).encode()


def fcm_send(headers, body, project, entry):
    value = headers.get("authorization", "")
    access = value[7:] if value.startswith("Bearer ") else ""
    if issued_access_tokens.get(access, 0) < time.time():
        entry["access_token"] = access
        return 401, [], json.dumps({"error": {"code": 401, "status": "UNAUTHENTICATED",
                                              "message": "Request had invalid authentication credentials."}}).encode()
    entry["access_token"] = access
    try:
        message = json.loads(body)["message"]
        token = message["token"]
    except Exception:
        return 400, [], json.dumps({"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "bad message"}}).encode()
    entry["token"] = token
    if project != FCM_PROJECT:
        return 404, [], b'{"error":{"code":404,"status":"NOT_FOUND","message":"no such project"}}'
    answer = ruled("fcm", token)
    if answer:
        if answer[0] == 401:
            issued_access_tokens.pop(access, None)
        return answer
    entry["payload"] = message
    return 200, [("content-type", "application/json")], json.dumps(
        {"name": "projects/%s/messages/%d" % (project, entry["stream"])}).encode()


def webpush(headers, body, index, entry):
    entry["vapid_key"] = check_vapid(headers)
    entry["token"] = str(index)
    answer = ruled("webpush", str(index))
    if answer:
        return answer
    if "ttl" not in headers or not headers["ttl"].isdigit():
        return 400, [], b"TTL is required"
    if headers.get("content-encoding") != "aes128gcm":
        return 415, [], b"aes128gcm only"
    if index >= len(subscribers):
        return 404, [], b""
    subscriber = subscribers[index]
    try:
        plaintext = http_ece.decrypt(bytes(body), private_key=subscriber["key"],
                                     auth_secret=unb64url(subscriber["auth"]), version="aes128gcm")
    except Exception as error:
        return 400, [], ("could not decrypt: %s" % error).encode()
    entry["payload"] = json.loads(plaintext)
    entry["headers"] = {"ttl": headers["ttl"], "urgency": headers.get("urgency"), "vapid_k": entry["vapid_key"]}
    return 201, [("location", "/wp/%d/messages/%d" % (index, entry["stream"]))], b""


def handle(headers, body, connection_id, stream_id):
    path = headers.get(":path", "")
    entry = {"connection": connection_id, "stream": stream_id, "path": path}
    try:
        if headers.get(":method") != "POST":
            raise Refused(405, "MethodNotAllowed")
        if path.startswith("/3/device/"):
            entry["service"] = "apns"
            entry["token"] = path[len("/3/device/"):]
            status, extra, answer = apns(headers, body, entry["token"], entry)
        elif path == "/token":
            entry["service"] = "token"
            status, extra, answer = fcm_token(body, entry)
        elif path.startswith("/v1/projects/") and path.endswith("/messages:send"):
            entry["service"] = "fcm"
            status, extra, answer = fcm_send(headers, body, path[len("/v1/projects/"):-len("/messages:send")], entry)
        elif path.startswith("/wp/") and path[4:].isdigit():
            entry["service"] = "webpush"
            status, extra, answer = webpush(headers, body, int(path[4:]), entry)
        else:
            raise Refused(404, "BadPath")
    except Refused as refused:
        status, extra = refused.status, refused.headers
        answer = json.dumps({"reason": refused.reason}).encode()
    entry["status"] = status
    record(entry)
    return status, extra, answer


connection_ids = itertools.count(1)


class HTTP2(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport
        self.id = next(connection_ids)
        self.streams = {}
        self.connection = h2.connection.H2Connection(
            config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self.connection.initiate_connection()
        # Apple allows many streams at once on one connection.
        self.connection.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 1000})
        self.transport.write(self.connection.data_to_send())
        record({"event": "connection", "connection": self.id})
        flush_records()

    def data_received(self, data):
        try:
            events = self.connection.receive_data(data)
        except h2.exceptions.ProtocolError:
            self.transport.write(self.connection.data_to_send())
            self.transport.close()
            return
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                self.streams[event.stream_id] = (dict(event.headers), bytearray())
            elif isinstance(event, h2.events.DataReceived):
                if event.stream_id in self.streams:
                    self.streams[event.stream_id][1].extend(event.data)
                self.connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                headers, body = self.streams.pop(event.stream_id, ({}, bytearray()))
                status, extra, answer = handle(headers, body, self.id, event.stream_id)
                response = [(":status", str(status)), ("content-length", str(len(answer)))] + extra
                self.connection.send_headers(event.stream_id, response, end_stream=not answer)
                if answer:
                    self.connection.send_data(event.stream_id, answer, end_stream=True)
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.transport.close()
        # Recorded before answered: whoever got an answer finds its request in the file.
        flush_records()
        self.transport.write(self.connection.data_to_send())


async def main():
    global origin, token_uri
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(directory, "server.pem"), os.path.join(directory, "server-key.pem"))
    context.set_alpn_protocols(["h2"])
    server = await asyncio.get_running_loop().create_server(HTTP2, "127.0.0.1", options.port, ssl=context,
                                                            reuse_address=True)
    port = server.sockets[0].getsockname()[1]
    origin = "https://127.0.0.1:%d" % port
    token_uri = origin + "/token"
    write("fcm.json", json.dumps({
        "type": "service_account", "project_id": FCM_PROJECT, "private_key_id": "k1",
        "private_key": open(os.path.join(directory, "fcm-key.pem")).read(), "client_email": FCM_EMAIL,
        "client_id": "1", "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": token_uri}), "w")
    write("subscriptions.json", json.dumps([
        {"endpoint": "%s/wp/%d" % (origin, index),
         "keys": {"p256dh": b64url(subscriber["key"].public_key().public_bytes(
             serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)),
                  "auth": subscriber["auth"]}} for index, subscriber in enumerate(subscribers)]), "w")
    write("ready", str(port), "w")
    async with server:
        await server.serve_forever()


origin = token_uri = ""
asyncio.run(main())
