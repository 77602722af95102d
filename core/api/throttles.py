"""Request rates for the API, counted in the shared cache (Redis in production).

DRF reads `THROTTLE_RATES` once, when the class is defined; these classes read the rate on every
request instead, so a changed `REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]` applies at once.
"""

from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from core.client_ip import client_ip

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


API_THROTTLES = [UserWriteThrottle, UserReadThrottle, AnonThrottle]
