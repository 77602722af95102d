"""Serve `GET /<code>` without Django's middleware stack.

The redirect view needs none of it (no session, user, CSRF or messages), and on the hottest path
of the product the middleware costs more than the view. Anything that is not a single path
segment in the short-code alphabet, or that is a reserved word, goes to the full application.
"""

import re

from django.core.handlers.exception import convert_exception_to_response
from django.core.handlers.wsgi import WSGIHandler

from .codes import RESERVED_ALIASES

_SHORT_CODE_PATH = re.compile(r"^/[A-Za-z0-9_-]{1,64}$")


class LeanHandler(WSGIHandler):
    """Django's WSGI handler with an empty middleware chain."""

    def load_middleware(self, is_async: bool = False) -> None:
        self._view_middleware = []
        self._template_response_middleware = []
        self._exception_middleware = []
        self._middleware_chain = convert_exception_to_response(self._get_response)


def is_short_code_request(environ: dict) -> bool:
    path = environ.get("PATH_INFO", "")
    return (
        environ.get("REQUEST_METHOD") in ("GET", "HEAD")
        and _SHORT_CODE_PATH.match(path) is not None
        and path[1:].lower() not in RESERVED_ALIASES
    )


class ShortCodeDispatcher:
    def __init__(self, application: WSGIHandler):
        self.application = application
        self.lean = LeanHandler()

    def __call__(self, environ, start_response):
        if is_short_code_request(environ):
            return self.lean(environ, start_response)
        return self.application(environ, start_response)
