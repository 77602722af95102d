"""Serve `GET /<code>` without Django's request machinery.

A redirect needs no middleware (session, user, CSRF, messages), no HttpRequest and no URL
resolver: on the product's hottest path they cost more than the work itself. The dispatcher
answers short-code requests from `serving.redirect.resolve` directly and hands everything else,
including anything unexpected on the way, to the ordinary Django application.
"""

import logging
import re
from http import HTTPStatus

from django.db import close_old_connections

from core.outages import is_database_unavailable
from links.cache import database_reads
from links.codes.aliases import RESERVED_ALIASES
from serving import app_links, gates, not_found_limit
from serving.redirect import (
    DOMAIN_ROOT_PAGE,
    NO_BROWSER_CACHE,
    NOT_FOUND,
    REDIRECT_SECURITY_HEADERS,
    SECURITY_HEADERS,
    TOO_MANY_REQUESTS,
    bare_root,
    error_answer,
    page_for,
    redirect_location_for,
    resolve,
    with_visitor_query,
)

logger = logging.getLogger(__name__)

# `/<code>` and `/<code>/` (a trailing slash, as some mail clients and people add, redirects
# like the bare code).
_SHORT_CODE_PATH = re.compile(r"^/([A-Za-z0-9_-]{1,64})/?$")
_READS = ("GET", "HEAD")
_STATUS_LINES = {
    status: f"{status} {HTTPStatus(status).phrase}"
    for status in (200, 301, 302, 307, 308, 403, 404, 410, 429)
}
# Everything but the Location, built once: the same for every redirect. Not the site's
# Referrer-Policy or Cross-Origin-Opener-Policy: a browser applies a redirect's policy to the
# request it follows, so "same-origin" here would strip the visitor's referrer from the
# destination's own analytics (and cut window.opener for pages that opened the link).
_REDIRECT_HEADERS = [NO_BROWSER_CACHE, ("Content-Length", "0"), *REDIRECT_SECURITY_HEADERS]


def short_code_of(environ: dict) -> str | None:
    """The code a GET or HEAD of `/<code>` or `/<code>/` asks for; None for any other request."""
    if environ.get("REQUEST_METHOD") not in _READS:
        return None
    match = _SHORT_CODE_PATH.match(environ.get("PATH_INFO", ""))
    if match is None or match[1].lower() in RESERVED_ALIASES:
        return None
    return match[1]


def is_short_code_request(environ: dict) -> bool:
    return short_code_of(environ) is not None


class ShortCodeDispatcher:
    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        code = short_code_of(environ)
        if code is None:
            path = environ.get("PATH_INFO")
            if environ.get("REQUEST_METHOD") in _READS:
                if path == "/":
                    return self._bare_root(environ, start_response)
                if path in app_links.PATHS:
                    return self._association_file(environ, start_response)
            return self.application(environ, start_response)
        reads_before = database_reads["count"]
        try:
            status, entry = resolve(code, environ)
        except Exception as exc:
            # Nothing was recorded yet (the visit is the last step): let Django answer. A
            # database outage is logged there, once, with its 503; anything else is a fault of
            # this path that Django may well hide by answering, so it is logged here.
            if is_database_unavailable(exc):
                logger.debug("Redirect for %s failed; handing it to Django", code, exc_info=True)
            else:
                logger.exception("Redirect for %s failed on the fast path; Django answers", code)
            return self.application(environ, start_response)
        finally:
            # What Django's request_finished would do: recycle a database connection a cache
            # miss used (most redirects use none, and the check costs more than the hit).
            if database_reads["count"] != reads_before:
                close_old_connections()
        if status == gates.UNLOCK:  # the password form: a page of Django's, with its CSRF token
            if entry is None:  # gates.PREVIEW: a preview fetcher's page (serving.previews)
                page = page_for(status, environ)
                return self._answer(environ, start_response, status, None, page, code)
            return self.application(environ, start_response)
        if entry is not None:  # the redirect, inlined: the hot path
            location = entry.location
            if entry.track_conversions and gates.CLICK_ID in environ:  # as gates decided
                location = gates.with_click_id(location, environ[gates.CLICK_ID])
            query_string = environ.get("QUERY_STRING")
            if query_string and entry.pass_query:  # inlined redirect_location_for
                location = with_visitor_query(location, query_string)
            start_response(_STATUS_LINES[status], [("Location", location), *_REDIRECT_HEADERS])
            return [b""]
        return self._answer(environ, start_response, status, None, page_for(status, environ), code)

    def _bare_root(self, environ, start_response):
        """An extra domain's root goes where the domain says (or is a 404); the default
        domain's is the site's home page."""
        try:
            answer = bare_root(environ)
        except Exception:
            logger.exception("The domain of a request for / could not be told; Django answers")
            answer = None
        if answer is None:
            return self.application(environ, start_response)
        status, entry = answer
        page = DOMAIN_ROOT_PAGE if status == NOT_FOUND else status
        return self._answer(environ, start_response, status, entry, page, "")

    def _association_file(self, environ, start_response):
        """A domain's app-association file (serving/app_links.py), from the domain table."""
        try:
            status, body, cache_control = app_links.association_answer(environ)
        except Exception:
            logger.exception("The domain of a well-known file request could not be told")
            return self.application(environ, start_response)
        headers = [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(body))),
            ("Cache-Control", cache_control),
            *SECURITY_HEADERS,
        ]
        start_response(_STATUS_LINES[status], headers)
        return [b"" if environ["REQUEST_METHOD"] == "HEAD" else body]

    @staticmethod
    def _answer(environ, start_response, status, entry, page, code):
        """A redirect to `entry`, or the page (a key of redirect.PAGES) when there is none."""
        if entry is not None:
            location = redirect_location_for(entry, environ)
            start_response(_STATUS_LINES[status], [("Location", location), *_REDIRECT_HEADERS])
            return [b""]
        text, extra = error_answer(page, code, environ)
        body = b"" if environ["REQUEST_METHOD"] == "HEAD" else text.encode()
        headers = [
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Length", str(len(body))),
            *SECURITY_HEADERS,
            *extra,
        ]
        if status == TOO_MANY_REQUESTS:
            headers.append(("Retry-After", not_found_limit.retry_after()))
        start_response(_STATUS_LINES[status], headers)
        return [body]
