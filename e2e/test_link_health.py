"""Issue #29's "done when", over HTTP against both deployments: a link's destination server (a
local one, started here) answers 200, then 500, then 200 again. The served product's health
checker (its periodic job: the node's link-checks runner, or beat and the webhooks worker) turns
the link broken, its visitors go to its fallback_url meanwhile, it recovers and sends them to the
destination again, and a webhook receiver gets link.broken and link.recovered once each.

Each mode runs on a deployment of its own, started with the checker's intervals cut from minutes
to a second (LINK_CHECK_*): the session's deployment keeps the shipped ones. The destination
listens on this machine's own non-loopback address: the long-URL policy refuses loopback, and
the harness's LINK_CHECK_ALLOW_PRIVATE=1 (the checker's test-only allowance) lets it reach a
private one.
"""

from __future__ import annotations

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import harness
import pytest
from harness import HTTP_TIMEOUT

FAST_CHECKS = {
    "LINK_CHECK_SECONDS": "1",
    "LINK_CHECK_OK_SECONDS": "1",
    "LINK_CHECK_BROKEN_SECONDS": "1",
    "LINK_CHECK_HOST_SECONDS": "0.2",
    "LINK_CHECK_FAILURES": "2",
    "LINK_CHECK_FETCH_SECONDS": "3",
}
WAIT = 90  # seconds for a change of health to show (the checker ticks every second)


def _own_address() -> str:
    """This machine's address on its default route (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("203.0.113.1", 9))  # TEST-NET-3: any routed address does
        except OSError:
            return ""
        return sock.getsockname()[0]


class Destination:
    """An HTTP server answering every GET with `status`, which the test changes."""

    def __init__(self, address: str):
        self.status = 200
        self.user_agents: list[str] = []
        destination = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                destination.user_agents.append(self.headers.get("User-Agent", ""))
                body = b"<title>Spring sale</title>"
                self.send_response(destination.status)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer((address, 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://{address}:{self.server.server_address[1]}/spring-sale"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module", params=("embedded", "services"))
def checked_deployment(request, own_deployment):
    with own_deployment(request.param, name=f"link-health-{request.param}", env=FAST_CHECKS) as dep:
        yield dep


@pytest.fixture
def destination():
    address = _own_address()
    if not address or address.startswith("127."):
        pytest.skip("this machine has no address but loopback, which the long-URL policy refuses")
    destination = Destination(address)
    yield destination
    destination.close()


@pytest.fixture
def receiver():
    receiver = harness.WebhookReceiver()
    yield receiver
    receiver.close()


def _health(dep, code: str) -> dict:
    return harness.api_get(dep, f"/api/v1/links/{code}/")["health"]


def _wait_health(dep, code: str, status: str) -> dict:
    def reached() -> dict | None:
        shown = _health(dep, code)
        return shown if shown["status"] == status else None

    return harness.wait_until(reached, timeout=WAIT, interval=0.5, what=f"health {status}")


def _visit(dep, code: str, index: int) -> tuple[int, str | None]:
    answer = harness.get_fresh(dep.port, f"/{code}", harness.visitor_headers(index))
    return answer.status, answer.location


def test_a_destination_that_fails_for_a_while_fails_over_and_recovers(
    checked_deployment, destination, receiver
):
    dep = checked_deployment
    with dep.api() as api:
        added = api.post(
            dep.url("/api/v1/webhooks/"),
            json={"url": receiver.url, "events": ["link.broken", "link.recovered"]},
            timeout=HTTP_TIMEOUT,
        )
    assert added.status_code == 201, added.text[:800]
    fallback = harness.unique_url("failover")
    link = harness.create_link(dep, destination.url, fallback_url=fallback)
    code = link["code"]
    assert link["health"]["status"] == "unknown" and link["fallback_url"] == fallback

    _wait_health(dep, code, "ok")
    assert _visit(dep, code, 0) == (302, destination.url)
    assert any(agent.startswith("shorturl-link-checker/1") for agent in destination.user_agents)

    destination.status = 500
    started = time.monotonic()
    broken = _wait_health(dep, code, "broken")
    harness.note(dep, "link health", f"broken {time.monotonic() - started:.1f} s after the 500s")
    assert "500" in broken["reason"], broken
    for index in range(1, 5):  # every server worker: the cached entries were refreshed
        assert _visit(dep, code, index) == (302, fallback)

    destination.status = 200
    _wait_health(dep, code, "ok")
    for index in range(5, 9):
        assert _visit(dep, code, index) == (302, destination.url)

    def told() -> dict | None:
        events = {
            event: [e for e in receiver.events(event) if e["data"]["link"]["code"] == code]
            for event in ("link.broken", "link.recovered")
        }
        return events if all(events.values()) else None

    harness.wait_until(told, timeout=60, what="link.broken and link.recovered")
    time.sleep(3)  # a second announcement, were there one, would have come by now
    events = told()
    assert [len(events["link.broken"]), len(events["link.recovered"])] == [1, 1], events
    assert events["link.broken"][0]["data"]["link"]["health"]["status"] == "broken"
    assert events["link.recovered"][0]["data"]["link"]["fallback_url"] == fallback
