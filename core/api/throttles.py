"""Request rates for the API, counted in the shared cache (Redis in production).

DRF reads `THROTTLE_RATES` once, when the class is defined; these classes read the rate on every
request instead, so a changed `REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]` applies at once.

Besides the global rates, an API key may have a limit of its own (KeyRateThrottle): counted
exactly across every process and node by `settings.API_KEY_LIMITER` and told to the caller in
the RateLimit-Limit / -Remaining / -Reset headers of each answer (KeyLimitHeadersMixin).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.utils.module_loading import import_string
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, BaseThrottle, UserRateThrottle

from core.client_ip import client_ip

# The largest per-key limit accepted (requests per minute): past it the global rates bind first.
MAX_KEY_RATE = 1_000_000

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def is_write(request, view) -> bool:
    """Whether a call changes something: by its method, unless the view says otherwise
    (`view.is_write(request)`: YOURLS's API shortens with a GET, and reads with a POST)."""
    says = getattr(view, "is_write", None)
    return says(request) if says is not None else request.method in WRITE_METHODS


class _CurrentRateMixin:
    scope: str

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class UserWriteThrottle(_CurrentRateMixin, UserRateThrottle):
    """Changes by one signed-in user (`API_WRITE_RATE`, 600/min unless set)."""

    scope = "api_write"

    def allow_request(self, request, view) -> bool:
        if not request.user.is_authenticated or not is_write(request, view):
            return True
        return super().allow_request(request, view)


class UserReadThrottle(_CurrentRateMixin, UserRateThrottle):
    """Reads by one signed-in user (`API_READ_RATE`)."""

    scope = "api_read"

    def allow_request(self, request, view) -> bool:
        if not request.user.is_authenticated or is_write(request, view):
            return True
        return super().allow_request(request, view)


class AnonThrottle(_CurrentRateMixin, AnonRateThrottle):
    """Callers without credentials, per client IP (`API_ANON_RATE`)."""

    scope = "anon"

    def get_ident(self, request) -> str:
        # DRF's own version trusts the whole X-Forwarded-For header when NUM_PROXIES is not
        # given to it; the visit capture's rule trusts it exactly as far as NUM_PROXIES goes.
        return client_ip(request.META)


def key_rate_problem(value: object) -> str | None:
    """Why `value` is no per-key limit (requests per minute, or None for "no limit of its
    own"); None if it is one. The one rule for keys and workspace defaults in every channel."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_KEY_RATE:
        return f"A whole number of requests per minute from 1 to {MAX_KEY_RATE:,}, or none."
    return None


@dataclass(frozen=True)
class KeyLimit:
    """One request counted against its key's limit: how it stands after it."""

    limit: int  # requests per minute
    remaining: int  # left in this minute (0 once refused)
    reset: int  # seconds until the minute turns and the count starts again
    allowed: bool

    def headers(self) -> dict[str, str]:
        return {
            "RateLimit-Limit": str(self.limit),
            "RateLimit-Remaining": str(self.remaining),
            "RateLimit-Reset": str(self.reset),
        }


@functools.cache
def key_limiter() -> Callable[[object], KeyLimit | None]:
    # Named by a setting: the counter keeps its rows in the accounts app, above this layer.
    return import_string(settings.API_KEY_LIMITER)


class KeyRateThrottle(BaseThrottle):
    """One API key's own limit (its rate_limit, else its workspace's api_rate_limit), in every
    API that takes keys, the compat ones included. Keys without one, sessions and passwords
    meet only the global rates. What was counted is left on the request as `key_limit`."""

    state: KeyLimit | None = None

    def allow_request(self, request, view) -> bool:
        # A request checked twice (a view that checks before DRF does) is counted once.
        self.state = getattr(request, "key_limit", None)
        if self.state is None and hasattr(request.auth, "requests_per_minute"):
            self.state = key_limiter()(request.auth)
            request.key_limit = self.state
        return self.state is None or self.state.allowed

    def wait(self) -> float | None:
        return self.state.reset if self.state is not None else None


API_THROTTLES = [KeyRateThrottle, UserWriteThrottle, UserReadThrottle, AnonThrottle]
