"""Security round 3, finding 3, against both deployments: a webhook receiver that answers one
byte every 3 s (a tarpit, on loopback: the harness allows private targets) holds no web thread
and no part of the visit pipeline.

- "Send a test", 8 at once through the API and once on the page, answers at once (queued; a
  test not yet over answers for the next ones);
- the tarpit's connections are cut off within the documented deadline (WEBHOOK_ATTEMPT_SECONDS,
  10 s by default) plus a margin for a busy machine;
- while it tarpits (its workspace's new links and clicks queue deliveries to it), clicks on a
  link of ANOTHER workspace are stored at their usual pace: the click-to-stored time is measured
  before the tarpit webhook exists and while it tarpits, and both are reported.
"""

from __future__ import annotations

import secrets
import select
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import harness
import pytest
from harness import HTTP_TIMEOUT

DEADLINE = 10.0  # settings.WEBHOOK_ATTEMPT_SECONDS's default: the harness does not change it
MARGIN = 5.0  # a busy 2-core machine
CLICKS = 12


class Tarpit:
    """Takes a POST, then sends its answer one byte every `every` seconds, for up to
    `for_seconds`; keeps how long each connection lasted until the client hung up."""

    def __init__(self, every: float = 3.0, for_seconds: float = 120.0):
        self.every, self.for_seconds = every, for_seconds
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/hook"
        self.connections = 0
        self.hung_up_after: list[float] = []  # seconds from accept to the client's hang-up
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        started = time.monotonic()
        answer = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"
        with conn:
            try:
                request = b""
                while b"\r\n\r\n" not in request:
                    chunk = conn.recv(65536)
                    if not chunk:
                        raise ConnectionError
                    request += chunk
                for byte in answer:
                    conn.sendall(bytes([byte]))
                    # Wait `every` seconds, or less if the client hangs up (FIN: readable, b"").
                    readable, _, _ = select.select([conn], [], [], self.every)
                    if readable and not conn.recv(65536):
                        raise ConnectionError
                    if time.monotonic() - started > self.for_seconds:
                        return
            except OSError:  # ConnectionError included
                with self.lock:
                    self.hung_up_after.append(time.monotonic() - started)

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def tarpit():
    pit = Tarpit()
    yield pit
    pit.close()


def _click_to_stored(dep: harness.Deployment, code: str, long_url: str, first: int) -> float:
    """Seconds from the last of CLICKS more people's clicks (visitors `first`…) until the
    stats count them all, with the `first` counted before."""
    for index in range(first, first + CLICKS):
        answer = harness.get_fresh(dep.port, f"/{code}", harness.visitor_headers(index))
        assert (answer.status, answer.location) == (302, long_url)
    expected = first + CLICKS
    counted = harness.wait_for_visits(dep, code, expected, timeout=90)
    assert counted.reached, f"{counted.stored} of {expected} clicks stored in 90 s: {counted}"
    return counted.seconds


def test_a_tarpit_receiver_holds_no_web_thread_nor_the_visits_of_another_workspace(
    deployment, tarpit
):
    run = secrets.token_hex(3)
    with deployment.api() as api:
        other = api.post(
            deployment.url("/api/v1/workspaces/"),
            json={"name": f"Other {run}", "slug": f"other-{run}"},
            timeout=HTTP_TIMEOUT,
        )
    assert other.status_code == 201, other.text[:500]
    other_url = harness.unique_url("other-workspace")
    other_code = harness.create_link(deployment, other_url, workspace=f"other-{run}")["code"]
    before = _click_to_stored(deployment, other_code, other_url, first=0)

    # The tarpit webhook, in demo's personal workspace.
    with deployment.api() as api:
        added = api.post(
            deployment.url("/api/v1/webhooks/"),
            json={"url": tarpit.url, "events": ["link.created", "link.clicked"]},
            timeout=HTTP_TIMEOUT,
        )
    assert added.status_code == 201, added.text[:500]
    hook_id = added.json()["id"]

    # "Send a test", 8 at once: each answers at once, queued, none waits on the tarpit.
    def send_test(_: int) -> tuple[int, float, str]:
        started = time.monotonic()
        with deployment.api() as api:
            answer = api.post(
                deployment.url(f"/api/v1/webhooks/{hook_id}/test/"), timeout=HTTP_TIMEOUT
            )
        return answer.status_code, time.monotonic() - started, answer.text[:300]

    with ThreadPoolExecutor(8) as pool:
        tests = list(pool.map(send_test, range(8)))
    assert all(status == 202 for status, _, _ in tests), tests
    slowest_test = max(took for _, took, _ in tests)
    assert slowest_test < 5.0, f"Send a test took {slowest_test:.1f} s: {tests}"

    # And the page's button, as a person presses it.
    sess = harness.login(deployment, "demo", "demo")
    page = sess.get(deployment.url("/dashboard/webhooks/"), timeout=HTTP_TIMEOUT)
    assert page.status_code == 200
    started = time.monotonic()
    pressed = harness.post_form(
        deployment, sess, f"/dashboard/webhooks/{hook_id}/test/", page.text, {}
    )
    page_took = time.monotonic() - started
    assert pressed.status_code == 302, pressed.text[:500]
    assert page_took < 5.0, f"the page's Send a test took {page_took:.1f} s"
    assert (
        "Test queued for"
        in sess.get(deployment.url("/dashboard/webhooks/"), timeout=HTTP_TIMEOUT).text
    )

    # Its workspace's links and clicks queue more deliveries to the tarpit.
    for n in range(4):
        url = harness.unique_url(f"tarpit-{n}")
        code = harness.create_link(deployment, url)["code"]
        harness.get_fresh(deployment.port, f"/{code}", harness.visitor_headers(100 + n))
    harness.wait_until(lambda: tarpit.connections >= 1, timeout=30, what="the tarpit to be called")

    # Another workspace's clicks, while the tarpit holds its deliveries.
    during = _click_to_stored(deployment, other_code, other_url, first=CLICKS)

    # The tarpit is cut off within the deadline, however long it would go on.
    harness.wait_until(
        lambda: tarpit.hung_up_after,
        timeout=DEADLINE + MARGIN + 30,
        what="an attempt to the tarpit to be cut off",
    )
    longest = max(tarpit.hung_up_after)
    assert longest <= DEADLINE + MARGIN, f"held for {longest:.1f} s: {tarpit.hung_up_after}"
    assert deployment.session().get(deployment.url("/healthz"), timeout=10).status_code == 200

    with deployment.api() as api:
        log = api.get(
            deployment.url(f"/api/v1/webhooks/{hook_id}/deliveries/"), timeout=HTTP_TIMEOUT
        ).json()
    errors = {entry["error"] for entry in log if entry["error"]}
    assert any("cut off" in error for error in errors), log[:3]
    hook = harness.api_get(deployment, f"/api/v1/webhooks/{hook_id}/")
    assert hook["failures"] >= 1 and hook["retry_after"], hook  # backed off

    harness.note(
        deployment,
        "webhook tarpit",
        f"another workspace's {CLICKS} clicks stored {before:.1f} s after the last click "
        f"before the tarpit, {during:.1f} s while it tarpits; "
        f"tarpit connections {tarpit.connections}, "
        f"cut off after {', '.join(f'{s:.1f}' for s in sorted(tarpit.hung_up_after))} s "
        f"(deadline {DEADLINE:g} s); 8 parallel Send a test answered in <= "
        f"{slowest_test:.2f} s, "
        f"the page's in {page_took:.2f} s",
    )
