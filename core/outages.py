"""A database that cannot be reached: 503 with Retry-After, said once in the log.

Connection failures (the server down, refused, gone away; a SQLite file that cannot be opened)
are an outage, not a bug: people get a friendly page, API callers JSON, both with Retry-After,
and the log gets one line with the cause instead of a 500 and its traceback logged twice.
Other database errors (constraint violations, bad SQL) stay 500s: they are bugs. Lock wait
timeouts and deadlocks are OperationalErrors too; they are transient as well, so "try again"
is the right answer for them.
"""

from __future__ import annotations

import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils.log import log_response
from django.views import defaults

from core.db import RETRIED_MYSQL_CODES

RETRY_AFTER_SECONDS = 30
DATABASE_UNAVAILABLE_MESSAGE = (
    "The database is unavailable right now; please try again in a moment."
)


# OperationalError also carries errors of our own making (on SQLite "no such table" after a
# skipped migrate; on MySQL some data errors): only these mean "cannot talk to it right now".
# MySQL/MariaDB: too many connections, a Galera node out of the primary component (1047),
# shutting down, lock wait timeout, deadlock (or certification conflict), connection
# killed, client-side connect/host/gone away/lost/read failures, disconnected by the server.
_UNAVAILABLE_MYSQL_CODES = (
    frozenset({1040, 1053, 1927, 2002, 2003, 2005, 2006, 2013, 2055, 4031}) | RETRIED_MYSQL_CODES
)
_UNAVAILABLE_SQLITE_MESSAGES = ("unable to open database", "database is locked", "disk i/o error")


def is_database_unavailable(exc: BaseException) -> bool:
    """Whether `exc` says the database cannot be reached right now (an outage, worth a retry),
    not that something was wrong with what was asked of it (a bug: a 500)."""
    if isinstance(exc, InterfaceError):
        return True
    if not isinstance(exc, OperationalError):
        return False
    reason = exc.args[0] if exc.args else None
    if isinstance(reason, int):
        return reason in _UNAVAILABLE_MYSQL_CODES
    text = str(reason).lower()
    return any(message in text for message in _UNAVAILABLE_SQLITE_MESSAGES)


def database_unavailable_response(request: HttpRequest) -> HttpResponse:
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": DATABASE_UNAVAILABLE_MESSAGE}, status=503)
    else:
        # No request context: the context processors would reach for the session and the user,
        # which live in the database.
        response = HttpResponse(render_to_string("503.html"), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class DatabaseUnavailableMiddleware:
    """Turns a view's database connection failure into the 503 answer (see the module doc)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_database_unavailable(exception):
            return None
        response = database_unavailable_response(request)
        # One line with the cause; Django then leaves the response alone (no second line).
        log_response(
            "Database unavailable: %s (%s)",
            request.path,
            exception,
            response=response,
            request=request,
        )
        return response


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500. An outage met outside a view, in a middleware that reads the session or the
    user (the time zone's, say), never reaches DatabaseUnavailableMiddleware.process_exception:
    it still answers 503 here. Anything else is Django's 500 page."""
    exception = sys.exc_info()[1]
    if exception is not None and is_database_unavailable(exception):
        return database_unavailable_response(request)
    return defaults.server_error(request)
