"""Request bodies against `make serve`, both modes: slow senders hold no thread and are cut off;
chunked bodies reach the app (security round 3, findings 1 and 12f).

A client announcing a body and sending a byte every 2 s used to hold one of the server's
WEB_CONCURRENCY x WEB_THREADS threads (8 here, 16 in docker-compose) for as long as it liked: a
handful of them stopped redirects, the API and /healthz. The server now reads bodies in its event
loop before a thread is taken (shorturl_project/bodies.py), under the documented deadline
(docs/operations.md, "Production topology"): REQUEST_BODY_TIMEOUT = 10 s, plus a second per
REQUEST_BODY_MIN_RATE = 16 KiB received.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import harness
from harness import HOST, WEB_CONCURRENCY, WEB_THREADS, get_fresh, visitor_headers

SLOW_CONNECTIONS = 24  # 3x the threads here, more than docker-compose's 4 x 4
ANSWER_WITHIN = 5.0  # what /healthz and a redirect must be answered in meanwhile
DEADLINE = 10.0  # REQUEST_BODY_TIMEOUT's default; 5 bytes sent add nothing at 16 KiB/s
CUT_OFF_MARGIN = 5.0  # a busy 2-core machine, and the sender's own 2-s step
BYTE_EVERY = 2.0
GIVE_UP_AFTER = 40.0  # a sender never cut off stops here (and the test fails)

_YOURLS = (
    b"POST /yourls-api.php HTTP/1.1\r\nHost: %s\r\n"
    b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\n"
)
# Any invented csrftoken cookie: the login view reads the body before checking anything.
_LOGIN = (
    b"POST /accounts/login/ HTTP/1.1\r\nHost: %s\r\n"
    b"Cookie: csrftoken=Zx8qYtq2vN4mS7kLp0aWc3eRb6dHf9Jg\r\n"
    b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\n"
)


@dataclass
class Cut:
    after: float | None = None  # seconds from the headers to the server's answer or close
    how: str = ""  # the answer's status line, or how the connection ended


class SlowSender(threading.Thread):
    """Sends a request's headers announcing 100,000 bytes, then one byte every 2 s."""

    def __init__(self, port: int, head: bytes):
        super().__init__(daemon=True)
        self.port, self.head, self.cut = port, head % HOST.encode(), Cut()
        self.sending = threading.Event()  # set once the headers are out

    def run(self) -> None:
        with socket.create_connection((HOST, self.port), timeout=BYTE_EVERY) as sock:
            sock.sendall(self.head)
            started = time.monotonic()
            self.sending.set()
            while time.monotonic() - started < GIVE_UP_AFTER:
                try:
                    data = sock.recv(4096)
                except TimeoutError:
                    data = None
                except OSError as error:
                    data, self.cut.how = b"", f"reset ({error})"
                if data is not None:
                    self.cut.after = time.monotonic() - started
                    self.cut.how = self.cut.how or (
                        data.split(b"\r\n", 1)[0].decode("latin-1") if data else "closed"
                    )
                    return
                try:
                    sock.sendall(b"a")
                except OSError as error:
                    self.cut.after, self.cut.how = time.monotonic() - started, f"send: {error}"
                    return


def _timed_get(dep: harness.Deployment, path: str, headers=None) -> tuple[float, object]:
    started = time.monotonic()
    try:
        answer = get_fresh(dep.port, path, headers, timeout=ANSWER_WITHIN)
    except (OSError, http.client.HTTPException) as error:
        return time.monotonic() - started, error
    return time.monotonic() - started, answer


def test_slow_bodies_hold_no_thread_and_are_cut_off(deployment):
    """24 clients trickling request bodies (YOURLS API and sign-in shapes) do not stop
    /healthz or a redirect, and each is cut off at the documented deadline with a 408."""
    long_url = harness.unique_url("slow-bodies")
    code = harness.create_link(deployment, long_url)["code"]
    threads = WEB_CONCURRENCY * WEB_THREADS
    senders = [
        SlowSender(deployment.port, _YOURLS if i % 2 else _LOGIN) for i in range(SLOW_CONNECTIONS)
    ]
    for sender in senders:
        sender.start()
    for sender in senders:
        assert sender.sending.wait(10), "a slow sender could not even connect"
    time.sleep(BYTE_EVERY * 1.5)  # every sender holds its request open now

    seen = []
    for round_ in range(3):  # at ~3 s, ~5 s and ~7 s into the slow bodies
        for path, headers in (("/healthz", None), (f"/{code}", visitor_headers(round_))):
            took, answer = _timed_get(deployment, path, headers)
            seen.append((path, round(took, 2), answer))
            assert not isinstance(answer, Exception), (
                f"{path} failed after {took:.1f} s while {SLOW_CONNECTIONS} slow bodies were "
                f"held (the server has {threads} threads): {answer!r}"
            )
            expected = 200 if path == "/healthz" else 302
            assert answer.status == expected, f"{path} → {answer.status}: {answer.body[:300]!r}"
            if path != "/healthz":
                assert answer.location == long_url
            assert took < ANSWER_WITHIN
    held = sum(sender.cut.after is None for sender in senders)
    assert held == SLOW_CONNECTIONS, f"only {held} slow bodies were still held while measuring"

    for sender in senders:
        sender.join(GIVE_UP_AFTER + 5)
    cuts = [sender.cut for sender in senders]
    late = [c for c in cuts if c.after is None or c.after > DEADLINE + CUT_OFF_MARGIN]
    assert not late, f"slow senders not cut off within {DEADLINE + CUT_OFF_MARGIN} s: {late}"
    early = [c for c in cuts if c.after < DEADLINE - 1]
    assert not early, f"slow senders cut off before the {DEADLINE} s deadline: {early}"
    not_408 = [c for c in cuts if not c.how.startswith("HTTP/1.1 408")]
    assert not not_408, f"slow senders not answered 408 Request Timeout: {not_408}"
    slowest = max(took for _, took, _ in seen)
    harness.note(
        deployment,
        "slow bodies",
        f"{SLOW_CONNECTIONS} held against {threads} threads: /healthz and a redirect answered in "
        f"≤ {slowest:.2f} s; senders cut off with 408 after "
        f"{min(c.after for c in cuts):.1f}–{max(c.after for c in cuts):.1f} s",
    )


def test_chunked_api_create(deployment):
    """A client sending its JSON chunked (no Content-Length) creates the link it asked for."""
    long_url = harness.unique_url("chunked")
    body = json.dumps({"long_url": long_url}).encode()
    conn = http.client.HTTPConnection(HOST, deployment.port, timeout=harness.HTTP_TIMEOUT)
    try:
        conn.request(
            "POST",
            "/api/v1/links/",
            body=iter([body[:10], body[10:]]),  # an iterable: http.client sends it chunked
            headers={
                "Authorization": f"Token {deployment.token}",
                "Content-Type": "application/json",
                "Transfer-Encoding": "chunked",
            },
            encode_chunked=True,
        )
        response = conn.getresponse()
        text = response.read().decode()
    finally:
        conn.close()
    assert response.status == 201, f"chunked create → {response.status}: {text[:500]}"
    link = json.loads(text)
    assert link["long_url"] == long_url
    answer = get_fresh(deployment.port, urlsplit(link["short_url"]).path, visitor_headers(1))
    assert (answer.status, answer.location) == (302, long_url)


def test_body_over_the_cap_is_refused_unread(deployment):
    """A Content-Length past the largest body any endpoint takes is answered 413 at once, in
    the API's JSON on the API, without waiting for the body."""
    with socket.create_connection((HOST, deployment.port), timeout=harness.HTTP_TIMEOUT) as sock:
        sock.sendall(
            b"POST /api/v1/links/ HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000000000\r\n\r\n{" % HOST.encode()
        )
        response = http.client.HTTPResponse(sock)
        response.begin()
        text = response.read().decode()
    assert response.status == 413, text[:300]
    # REQUEST_BODY_MAX_BYTES's default: the import file's 5 MiB plus 1 MiB.
    assert "At most 6,291,456 bytes" in json.loads(text)["detail"]
