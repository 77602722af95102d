"""The WSGI entry point sends short codes past the middleware and everything else through it."""

import logging

import pytest
from django.test import override_settings

from links.services.change import link_revoke
from links.tests.factories import UrlLinkFactory
from links.tests.helpers import call_wsgi
from serving import not_found_limit
from serving.hotpath import is_short_code_request


@pytest.mark.parametrize(
    ("path", "method", "lean"),
    [
        ("/aB3xY9k", "GET", True),
        ("/spring-sale", "HEAD", True),
        ("/aB3xY9k", "POST", False),
        ("/admin", "GET", False),
        ("/healthz", "GET", False),
        ("/Dashboard", "GET", False),
        ("/favicon.ico", "GET", False),
        ("/api/v1/links/", "GET", False),
        ("/", "GET", False),
    ],
)
def test_which_requests_take_the_lean_path(path, method, lean):
    assert is_short_code_request({"PATH_INFO": path, "REQUEST_METHOD": method}) is lean


@pytest.mark.django_db(transaction=True)
def test_the_wsgi_application_redirects_short_codes_without_django(user):
    link = UrlLinkFactory(owner=user, long_url="https://example.com/wsgi")
    status, headers, _ = call_wsgi(f"/{link.code}")
    assert status.startswith("302")
    assert headers["Location"] == "https://example.com/wsgi"
    # No session was loaded: the full stack's cookies are not there.
    assert "Set-Cookie" not in headers


@pytest.mark.django_db(transaction=True)
def test_the_wsgi_application_still_serves_everything_else():
    status, _headers, _ = call_wsgi("/admin")
    assert status.startswith("301")  # CommonMiddleware's trailing slash: the full stack ran
    status, _, body = call_wsgi("/nope-not-here")
    assert status.startswith("404")
    assert b"does not exist" in body


@pytest.mark.django_db(transaction=True)
def test_the_wsgi_fast_path_answers_410_and_404_pages(user):
    link = UrlLinkFactory(owner=user)
    call_wsgi(f"/{link.code}")
    link_revoke(code=link.code, user=user)
    status, headers, body = call_wsgi(f"/{link.code}")
    assert status == "410 Gone"
    assert headers["Content-Type"].startswith("text/html")
    assert b"no longer available" in body
    status, _, body = call_wsgi("/zzzzzzz")
    assert status == "404 Not Found"
    assert b"does not exist" in body


@pytest.mark.django_db(transaction=True)
def test_a_failure_on_the_fast_path_is_handed_to_django_and_logged(user, monkeypatch, caplog):
    """Django answers, so the visitor never notices: the log must, or a broken fast path would
    go unseen while every redirect took the slow one."""
    link = UrlLinkFactory(owner=user, long_url="https://example.com/fallback")

    def broken(code, meta):
        raise RuntimeError("simulated")

    monkeypatch.setattr("serving.hotpath.resolve", broken)
    with caplog.at_level(logging.WARNING, logger="serving.hotpath"):
        status, headers, _ = call_wsgi(f"/{link.code}")
    assert status.startswith("302")
    assert headers["Location"] == "https://example.com/fallback"
    failures = [r for r in caplog.records if r.name == "serving.hotpath" and r.exc_info]
    assert len(failures) == 1 and "simulated" in str(failures[0].exc_info[1])


# What Django's SecurityMiddleware, XFrameOptionsMiddleware and django-csp's CSPMiddleware put on
# every other page.
SECURITY_HEADERS = (
    "X-Frame-Options",
    "X-Content-Type-Options",
    "Referrer-Policy",
    "Content-Security-Policy",
)


def _security_headers(headers) -> dict[str, str | None]:
    return {name: headers.get(name) for name in SECURITY_HEADERS}


@pytest.mark.django_db(transaction=True)
def test_the_fast_paths_pages_carry_the_sites_security_headers(client, user):
    """A 404, a 410 and a 429 from the fast path may not be framed or sniffed, leak no
    referrer beyond what the rest of the site allows and run no script but the site's own: the
    same values as Django's pages."""
    site = _security_headers(client.get("/accounts/login/").headers)
    policy = site.pop("Content-Security-Policy")
    assert site == {
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
    }
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    site["Content-Security-Policy"] = policy
    gone = UrlLinkFactory(owner=user)
    link_revoke(code=gone.code, user=user)

    flooder = {"REMOTE_ADDR": "203.0.113.7"}
    not_found_limit.reset()
    try:
        with override_settings(SHORTURL_NOT_FOUND_RATE="1/min"):
            call_wsgi("/zzzzzzz", extra=flooder)
            status, headers, _ = call_wsgi("/zzzzzzz", extra=flooder)
    finally:
        not_found_limit.reset()
    assert status.startswith("429")
    assert _security_headers(headers) == site
    for path, expected in (("/zzzzzzz", "404"), (f"/{gone.code}", "410")):
        for method in ("GET", "HEAD"):
            status, headers, _ = call_wsgi(path, method)
            assert status.startswith(expected), (path, method, status)
            assert _security_headers(headers) == site, (path, method)


@pytest.mark.django_db(transaction=True)
def test_a_redirect_leaves_the_referrer_to_the_page_that_linked_here(user):
    """A browser applies a redirect's Referrer-Policy to the request it follows: the site's
    "same-origin" would strip the visitor's referrer from the destination's analytics."""
    link = UrlLinkFactory(owner=user, long_url="https://example.com/referred")
    for method in ("GET", "HEAD"):
        status, headers, _ = call_wsgi(f"/{link.code}", method)
        assert status.startswith("302")
        assert "Referrer-Policy" not in headers
        assert "Cross-Origin-Opener-Policy" not in headers
        assert headers["X-Content-Type-Options"] == "nosniff"
