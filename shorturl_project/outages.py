"""A database that cannot be reached: 503 with Retry-After, said once in the log.

Connection failures (the server down, refused, gone away; a SQLite file that cannot be opened)
are an outage, not a bug: people get a friendly page, API callers JSON, both with Retry-After,
and the log gets one line with the cause instead of a 500 and its traceback logged twice.
Other database errors (constraint violations, bad SQL) stay 500s: they are bugs. Lock wait
timeouts and deadlocks are OperationalErrors too; they are transient as well, so "try again"
is the right answer for them.
"""

from __future__ import annotations

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils.log import log_response

RETRY_AFTER_SECONDS = 30
DATABASE_UNAVAILABLE_MESSAGE = (
    "The database is unavailable right now; please try again in a moment."
)


def is_database_unavailable(exc: BaseException) -> bool:
    return isinstance(exc, OperationalError | InterfaceError)


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
