"""The load every drill runs under: people clicking, a few API clients creating and editing.

What each client saw is kept, so that after a drill settles it can be held against what the
product stored: every redirect answered is a visit stored once, every link answered 201 exists
once, every answer is either right or a clear 503.
"""

from __future__ import annotations

import http.client
import re
import secrets
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import harness
import requests

CLICKERS = 16
CREATORS = 2
EDITORS = 1
CLICK_TIMEOUT = 15
# One row per drill, for the table printed at the end of the run (conftest.py).
ROWS: list[dict] = []


@dataclass
class Seen:
    """What the clients were answered, summed; `timeline` holds (seconds, ok) per answer."""

    answered: Counter = field(default_factory=Counter)  # code → redirects answered right
    unavailable: int = 0  # 503s (HAProxy's or the product's): clear, to be retried
    unavailable_samples: Counter = field(default_factory=Counter)  # what the 503s said
    server_errors: list[str] = field(default_factory=list)  # any other 5xx: a failed drill
    wrong: list[str] = field(default_factory=list)  # a 2xx-4xx that is not the right answer
    lost: int = 0  # connection failures: the answer, if any, never arrived
    # Clicks answered 503 or cut off: the only unanswered requests that may have stored a visit
    clicks_unanswered: int = 0
    # long URL → the codes answered for it (201, or 200: the owner's link for that URL given back)
    created: dict[str, set[str]] = field(default_factory=dict)
    edits: int = 0
    timeline: list[tuple[float, bool]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, ok: bool) -> None:
        with self.lock:
            self.timeline.append((time.monotonic(), ok))

    def faulty_span(self, since: float) -> tuple[float, float] | None:
        """Seconds from `since` to the first and to the last answer that was not right."""
        bad = [at for at, ok in self.timeline if not ok and at >= since]
        return (bad[0] - since, bad[-1] - since) if bad else None


def _title(text: str) -> str:
    """The <title> of an HTML answer (or the start of a JSON one), to tell whose 503 it was."""
    match = re.search(r"<title>([^<]*)</title>", text)
    return match.group(1).strip() if match else text.split(":", 1)[-1].strip()[:60]


class Load:
    """Start with `with Load(front, codes) as load:`; `load.seen` once the block has ended."""

    def __init__(self, front: harness.Deployment, links: dict[str, str], edited: str, tag: str):
        self.front = front
        self.links = links  # code → long URL, the links people click
        self.codes = sorted(links)
        self.edited = edited  # a code the editor changes over and over (nobody clicks it)
        self.tag = tag
        self.seen = Seen()
        self.stop = threading.Event()
        self.pool = ThreadPoolExecutor(CLICKERS + CREATORS + EDITORS)
        self.futures = []

    def __enter__(self) -> Load:
        self.futures += [self.pool.submit(self._clicker, i) for i in range(CLICKERS)]
        self.futures += [self.pool.submit(self._creator, i) for i in range(CREATORS)]
        self.futures += [self.pool.submit(self._editor) for _ in range(EDITORS)]
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for future in self.futures:
            future.result()  # a client's own bug fails the drill, not hidden
        self.pool.shutdown()

    def _answer(self, status: int, what: str) -> None:
        if status == 503:
            self.seen.unavailable += 1
            self.seen.unavailable_samples[what.split(":", 1)[0] + ": " + _title(what)] += 1
        elif status >= 500:
            self.seen.server_errors.append(f"{status} {what}")
        else:
            self.seen.wrong.append(f"{status} {what}")

    def _clicker(self, first: int) -> None:
        i = first
        while not self.stop.is_set():
            code = self.codes[i % len(self.codes)]
            try:
                answer = harness.get_fresh(
                    self.front.port, f"/{code}", harness.visitor_headers(i), timeout=CLICK_TIMEOUT
                )
            except (OSError, http.client.HTTPException):
                with self.seen.lock:
                    self.seen.lost += 1
                    self.seen.clicks_unanswered += 1
                self.seen.record(False)
            else:
                ok = answer.status == 302 and answer.location == self.links[code]
                with self.seen.lock:
                    if ok:
                        self.seen.answered[code] += 1
                    else:
                        self.seen.clicks_unanswered += answer.status == 503
                        self._answer(
                            answer.status,
                            f"GET /{code}: {answer.body[:600].decode(errors='replace')}",
                        )
                self.seen.record(ok)
            i += CLICKERS

    def _call(self, api, method: str, path: str, body: dict, expected: tuple[int, ...]):
        """One API call, its outcome recorded; the response when its status is one `expected`,
        else None."""
        try:
            response = api.request(
                method, self.front.url(path), json=body, timeout=harness.HTTP_TIMEOUT
            )
        except requests.RequestException:
            with self.seen.lock:
                self.seen.lost += 1
            self.seen.record(False)
            return None
        ok = response.status_code in expected
        if not ok:
            with self.seen.lock:
                self._answer(response.status_code, f"{method} {path}: {response.text[:600]}")
        self.seen.record(ok)
        return response if ok else None

    def _creator(self, index: int) -> None:
        """Creates new URLs; every other one is a URL the other creators send at about the same
        moment, which must give them all one link."""
        with self.front.api() as api:
            n = 0
            while not self.stop.is_set():
                n += 1
                mine = f"{index}/{secrets.token_hex(6)}" if n % 2 else f"shared/{n}"
                long_url = f"https://example.com/drill/{self.tag}/{mine}"
                response = self._call(
                    api, "POST", "/api/v1/links/", {"long_url": long_url}, (200, 201)
                )
                if response is not None:
                    with self.seen.lock:
                        self.seen.created.setdefault(long_url, set()).add(response.json()["code"])
                time.sleep(0.2)

    def _editor(self) -> None:
        with self.front.api() as api:
            n = 0
            while not self.stop.is_set():
                n += 1
                body = {"long_url": f"https://example.com/drill/{self.tag}/edited/{n}"}
                path = f"/api/v1/links/{self.edited}/"
                if self._call(api, "PATCH", path, body, (200,)) is not None:
                    with self.seen.lock:
                        self.seen.edits += 1
                time.sleep(0.5)
