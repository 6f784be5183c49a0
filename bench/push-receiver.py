#!/usr/bin/env python3
"""A push gateway stand-in for benchmarks: answers every POST with 204 and counts them.

    bench/push-receiver.py PORT        (prints the count on SIGTERM)
"""
import http.server
import signal
import sys
import threading

received = 0
lock = threading.Lock()


class Receiver(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        global received
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with lock:
            received += 1
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def stop(*_):
    print(f"push receiver: {received} deliveries", file=sys.stderr)
    sys.exit(0)


signal.signal(signal.SIGTERM, stop)
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Receiver).serve_forever()
