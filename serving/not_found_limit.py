"""How many 404s one client is answered before it gets 429 instead: a brake on code scanners.

A person mistyping a short link meets a 404 a few times a minute at most; a scanner walking
made-up codes asks thousands of times a second, and each one costs a lookup and a page. So each
worker process counts the 404s it answers per client, in fixed windows of
`SHORTURL_NOT_FOUND_RATE` ("300/min" unless set; "" turns it off), and once a client is past the
rate its 404s become 429 with Retry-After until the window turns.

- Only 404s are counted: a redirect never reaches this module, so the hit path costs nothing
  and a throttled client's real links still redirect.
- The client is `core.client_ip` (X-Forwarded-For trusted only NUM_PROXIES deep);
  an IPv6 client is counted by its /64, which one subscriber usually holds whole.
- Per process, in memory, at most MAX_CLIENTS addresses per window (a new address past that is
  not counted until the window turns), so memory stays bounded and no lock is shared between
  processes; a node with WEB_CONCURRENCY processes lets a client through at most that many
  times the rate.
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections.abc import Mapping

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from core.client_ip import client_ip

# ~150 bytes each: ~1.5 MB per process at most.
MAX_CLIENTS = 10_000
_PERIOD_SECONDS = {
    **dict.fromkeys(("s", "sec", "second"), 1),
    **dict.fromkeys(("m", "min", "minute"), 60),
    **dict.fromkeys(("h", "hour"), 3600),
    **dict.fromkeys(("d", "day"), 86400),
}
# Where clients past MAX_CLIENTS are counted, together: a flood from more addresses than the
# table holds (a botnet, the /64s of one /48) still meets a limit instead of none.
OVERFLOW_KEY = "others"


def parse_rate(rate: str) -> tuple[int, int] | None:
    """ "300/min" → (300, 60); the same notation as the API's rates (API_ANON_RATE). "" → None."""
    if not rate:
        return None
    count, _, period = rate.partition("/")
    try:
        allowed, seconds = int(count), _PERIOD_SECONDS[period.strip().lower()]
        if allowed < 1:  # "0/min" would answer every 404 with a 429, not turn the limit off
            raise ValueError(count)
        return allowed, seconds
    except (KeyError, ValueError):
        raise ImproperlyConfigured(
            f"SHORTURL_NOT_FOUND_RATE={rate!r}: expected a number per s, min, hour or day, "
            "e.g. 300/min (or empty to turn the limit off)"
        ) from None


def client_key(meta: Mapping[str, str]) -> str:
    """The client as counted: its address, or for IPv6 its /64 network."""
    address = client_ip(meta)
    if ":" not in address:
        return address
    try:
        ip = ipaddress.IPv6Address(address)
    except ValueError:
        return address
    if ip.ipv4_mapped:
        return str(ip.ipv4_mapped)
    return f"{ipaddress.IPv6Address(int(ip) >> 64 << 64)}/64"


class _Window:
    """404s per client since `started`; all clients share one window, so it is one dict."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}
        self.started = 0.0
        self.seconds = 0

    def add(self, key: str, allowed: int, seconds: int) -> bool:
        now = time.monotonic()
        with self.lock:
            if now - self.started >= seconds or seconds != self.seconds:
                self.counts.clear()
                self.started, self.seconds = now, seconds
            count = self.counts.get(key)
            if count is None:
                if len(self.counts) >= MAX_CLIENTS:
                    key = OVERFLOW_KEY
                    count = self.counts.get(key, 0)
                else:
                    count = 0
            self.counts[key] = count + 1
        return count >= allowed


_window = _Window()
_parsed_rates: dict[str, tuple[int, int] | None] = {}


def count_not_found(meta: Mapping[str, str]) -> bool:
    """Count a 404 for the client of `meta` (the WSGI environ); True if it is past its rate."""
    rate = settings.SHORTURL_NOT_FOUND_RATE
    limit = _parsed_rates.get(rate, False)
    if limit is False:
        limit = _parsed_rates[rate] = parse_rate(rate)
    if limit is None:
        return False
    return _window.add(client_key(meta), *limit)


def retry_after() -> str:
    """Seconds until the window turns, as the Retry-After header's value."""
    left = _window.started + _window.seconds - time.monotonic()
    return str(max(1, math.ceil(left)))


def clients_counted() -> int:
    return len(_window.counts)


def reset() -> None:
    """Forget every count (tests: each starts with a clean window)."""
    with _window.lock:
        _window.counts.clear()
        _window.started, _window.seconds = 0.0, 0


# A mistyped rate stops the process at start (wsgi.py imports this), not every 404 later.
parse_rate(settings.SHORTURL_NOT_FOUND_RATE)
