"""A real SMTP relay for the mail tests (Tests/TestSupport/SMTPRelay.swift starts it).

aiosmtpd on a loopback port, in the set-up the flags ask for: plain; STARTTLS required
(--cert/--key); TLS from the first byte (--implicit-tls, as on port 465); AUTH PLAIN/LOGIN required (--user/--password, only after STARTTLS unless
--auth-in-clear). Every message it accepts is appended to --record as one JSON line
(envelope, raw data base64, whether TLS and AUTH were used) and flushed at once. A rule
file (--rules) makes it answer the next N transactions with a given reply, at RCPT or at
the final dot: a line `451 2 data` or `550 1 rcpt`; each use is written back.
Once listening it writes the port to --ready.
"""
import argparse
import asyncio
import base64
import json
import os
import signal
import socket
import ssl
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, default=0)
parser.add_argument("--record", required=True)
parser.add_argument("--rules", required=True)
parser.add_argument("--ready", required=True)
parser.add_argument("--cert")
parser.add_argument("--key")
parser.add_argument("--user")
parser.add_argument("--password")
parser.add_argument("--auth-in-clear", action="store_true")
parser.add_argument("--implicit-tls", action="store_true")
options = parser.parse_args()

lock = threading.Lock()


def take_rule(stage):
    """The reply of the first live rule for this stage, using one of its turns."""
    with lock:
        try:
            with open(options.rules) as file:
                lines = [line.split() for line in file if line.strip()]
        except FileNotFoundError:
            return None
        for index, (code, count, where) in enumerate(lines):
            if where == stage and int(count) > 0:
                lines[index][1] = str(int(count) - 1)
                temporary = options.rules + ".tmp"
                with open(temporary, "w") as file:
                    file.write("".join(" ".join(line) + "\n" for line in lines))
                os.replace(temporary, options.rules)
                text = "try again later" if code.startswith("4") else "no such mailbox here"
                return f"{code} {code[0]}.0.0 {text}"
        return None


class Recorder:
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        reply = take_rule("rcpt")
        if reply:
            return reply
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        reply = take_rule("data")
        if reply:
            return reply
        entry = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "data": base64.b64encode(envelope.original_content or envelope.content).decode(),
            "tls": session.ssl is not None or server.transport.get_extra_info("ssl_object") is not None,
            "authenticated": bool(session.authenticated),
        }
        with lock, open(options.record, "a") as file:
            file.write(json.dumps(entry) + "\n")
            file.flush()
        return "250 2.0.0 accepted"


def authenticator(server, session, envelope, mechanism, auth_data):
    good = (isinstance(auth_data, LoginPassword)
            and auth_data.login.decode() == options.user and auth_data.password.decode() == options.password)
    return AuthResult(success=good, handled=False)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


settings = {}
if options.cert:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(options.cert, options.key)
    if options.implicit_tls:
        settings.update(ssl_context=context)
    else:
        settings.update(tls_context=context, require_starttls=True)
if options.user:
    settings.update(authenticator=authenticator, auth_required=True, auth_require_tls=not options.auth_in_clear)

port = options.port or free_port()
controller = Controller(Recorder(), hostname="127.0.0.1", port=port, decode_data=False, **settings)
controller.start()
with open(options.ready + ".tmp", "w") as file:
    file.write(str(port))
os.replace(options.ready + ".tmp", options.ready)

stopped = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stopped.set())
signal.signal(signal.SIGINT, lambda *_: stopped.set())
while not stopped.wait(0.2):
    pass
controller.stop()
