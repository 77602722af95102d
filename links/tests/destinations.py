"""A real destination server on loopback for the health checker's tests: each path answers what
the test says (status, body, headers, a pause first), and every GET is kept."""

from __future__ import annotations

import http.server
import threading
import time
from dataclasses import dataclass, field


@dataclass
class Destination:
    base: str = ""
    # path → (status, body, extra headers, seconds to wait first); unknown paths answer 200.
    answers: dict[str, tuple[int, str, dict[str, str], float]] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def url(self, path: str) -> str:
        return self.base + path

    def answer(self, path: str, status: int, body: str = "", delay: float = 0.0, **headers):
        self.answers[path] = (status, body, headers, delay)


def start_destination(host: str = "127.0.0.1") -> tuple[Destination, http.server.HTTPServer]:
    destination = Destination()
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            with lock:
                destination.requests.append((self.path, dict(self.headers.items())))
                status, body, headers, delay = destination.answers.get(
                    self.path, (200, "<title>Welcome</title>", {}, 0.0)
                )
            if delay:
                time.sleep(delay)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "text/html")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body.encode())))
                self.end_headers()
                self.wfile.write(body.encode())
            except OSError:
                pass  # the checker gave up (a timeout test)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer((host, 0), Handler)
    server.daemon_threads = True
    destination.base = f"http://{host}:{server.server_port}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return destination, server
