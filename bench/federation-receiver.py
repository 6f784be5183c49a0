#!/usr/bin/env python3
"""Many fediverse hosts' shared inboxes for bench/federation.sh: one server on every
loopback address (127.0.0.0/8), answering every POST with 202 and counting, per activity
id, the hosts (the Host header) it reached.

    bench/federation-receiver.py PORT     (GET /count?activity=ID -> the number of hosts)
"""
import http.server
import json
import sys
import threading
from urllib.parse import parse_qs, urlparse

hosts_by_activity = {}
lock = threading.Lock()


class Receiver(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            activity = json.loads(body).get("id", "")
        except ValueError:
            activity = ""
        with lock:
            hosts_by_activity.setdefault(activity, set()).add(self.headers.get("Host", ""))
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        activity = parse_qs(urlparse(self.path).query).get("activity", [""])[0]
        with lock:
            body = str(len(hosts_by_activity.get(activity, ()))).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


Server(("0.0.0.0", int(sys.argv[1])), Receiver).serve_forever()
