"""A webhook receiver for the benchmark: its own process, so it never competes with the producer
for a GIL. Answers every POST with 200 at once and notes when each event id first arrived.

    python bench/webhooks/receiver.py        # prints the port it listens on, then serves

GET /count gives `{"unique": n, "requests": m}`; GET /arrivals gives `{event_id: unix time}`.
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

first_seen: dict[str, float] = {}
requests_seen = 0
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a real receiver would offer

    def do_POST(self) -> None:
        global requests_seen  # noqa: PLW0603 - the process's whole state
        now = time.time()
        document = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        event_id = document.get("id") or document.get("eventId")
        with lock:
            requests_seen += 1
            first_seen.setdefault(event_id, now)
        self._answer(b"")

    def do_GET(self) -> None:
        with lock:
            if self.path == "/count":
                body = {"unique": len(first_seen), "requests": requests_seen}
            else:
                body = dict(first_seen)
        self._answer(json.dumps(body).encode())

    def _answer(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    sys.stdout.close()
    server.serve_forever()
