"""Helpers shared by the links tests (importable, unlike conftest files)."""

import io
from wsgiref.util import setup_testing_defaults

from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

# Imported with the test module, not in a test: its first import runs django.setup(), whose
# logging configuration would drop the handlers a test's caplog put on the root logger.
from shorturl_project.wsgi import application


def client_for(user, **kwargs) -> APIClient:
    """An API client signed in with `user`'s token, as another system would call."""
    client = APIClient(**kwargs)
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def call_wsgi(
    path: str, method: str = "GET", query_string: str = ""
) -> tuple[str, dict[str, str], bytes]:
    """(status line, headers, body) of one request to the production WSGI entry point, the way
    the server calls it: short codes take the fast path, everything else goes through Django."""
    environ = {"PATH_INFO": path, "REQUEST_METHOD": method, "wsgi.input": io.BytesIO()}
    setup_testing_defaults(environ)
    environ["QUERY_STRING"] = query_string
    environ["HTTP_HOST"] = "testserver"
    captured = {}

    def start_response(status, headers, exc_info=None):
        captured["status"], captured["headers"] = status, dict(headers)

    body = b"".join(application(environ, start_response))
    return captured["status"], captured["headers"], body
