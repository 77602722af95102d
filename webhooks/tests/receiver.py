"""A real HTTP receiver on 127.0.0.1 for the tests: records what it gets, answers as told."""

from __future__ import annotations

import http.server
import threading
import time
from dataclasses import dataclass, field


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    received: list[Received] = field(default_factory=list)
    # Answers in turn (status, body, seconds to wait first); the last one repeats.
    answers: list[tuple[int, str, float]] = field(default_factory=lambda: [(200, "ok", 0.0)])


def start_receiver() -> tuple[Receiver, http.server.ThreadingHTTPServer]:
    receiver = Receiver(url="")
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with lock:
                receiver.received.append(
                    Received(path=self.path, headers=dict(self.headers.items()), body=body)
                )
                answer = (
                    receiver.answers.pop(0) if len(receiver.answers) > 1 else receiver.answers[0]
                )
            status, text, delay = answer
            if delay:
                time.sleep(delay)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(text.encode())
            except OSError:
                pass  # the client gave up (a timeout test)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    receiver.url = f"http://127.0.0.1:{server.server_port}/hook"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return receiver, server
