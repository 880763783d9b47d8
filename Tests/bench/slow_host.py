#!/usr/bin/env python3
"""A deliberately slow HTTP host for the slow-host scenario (standard library only).

    slow_host.py PORT [DELAY_SECONDS=5]

Every request is answered with a 404 after DELAY_SECONDS, each on its own thread, so any number
of trustbed fetches can wait on it at once.  The number of requests seen is written to
standard output when it exits (SIGTERM)."""
from __future__ import annotations

import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port = int(sys.argv[1])
delay = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
stopping = threading.Event()
hits = [0]
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        with lock:
            hits[0] += 1
        stopping.wait(delay)
        body = b'{"error":"not_found","error_description":"slow host"}'
        try:
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


server = Server(("127.0.0.1", port), Handler)


def stop(*_):
    stopping.set()
    threading.Thread(target=server.shutdown, daemon=True).start()


signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
server.serve_forever()
print(f"slow host: {hits[0]} requests", flush=True)
