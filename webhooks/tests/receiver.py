"""A real HTTP receiver on 127.0.0.1 for the tests: records what it gets, answers as told."""

from __future__ import annotations

import http.server
import socket
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


@dataclass
class Tarpit:
    """A receiver that takes the POST, then answers one byte every `every` seconds (headers
    first, `in_body`: a quick status line and headers, then the body that way), for at most
    `for_seconds`. `cut_off_after` holds, per connection, how long the client kept it open."""

    url: str
    cut_off_after: list[float] = field(default_factory=list)


def start_tarpit(
    *, every: float = 0.3, for_seconds: float = 20.0, in_body: bool = False
) -> tuple[Tarpit, socket.socket]:
    listener = socket.create_server(("127.0.0.1", 0))
    tarpit = Tarpit(url=f"http://127.0.0.1:{listener.getsockname()[1]}/hook")
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n"

    def serve(conn: socket.socket) -> None:
        started = time.monotonic()
        with conn:
            conn.settimeout(for_seconds)
            request = b""
            try:
                while b"\r\n\r\n" not in request:
                    request += conn.recv(4096)
                if in_body:
                    conn.sendall(head)
                    trickle = b"x" * 100000
                else:
                    trickle = head
                for byte in trickle:
                    if time.monotonic() - started > for_seconds:
                        break
                    conn.sendall(bytes([byte]))
                    time.sleep(every)
            except OSError:
                pass  # the client hung up: what the deadline is for
            tarpit.cut_off_after.append(time.monotonic() - started)

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # closed: the test is over
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return tarpit, listener
