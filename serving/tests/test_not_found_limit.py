"""A flood of made-up codes from one client meets 429 + Retry-After; its real links still redirect.

The counter sees only 404 answers (a redirect never touches it), per client IP as
core.client_ip names it, in each worker process.
"""

import io
from wsgiref.util import setup_testing_defaults

import pytest
from django.core.exceptions import ImproperlyConfigured

from links.tests.factories import UrlLinkFactory
from serving import not_found_limit

pytestmark = pytest.mark.django_db(transaction=True)


def _call(path: str, *, method: str = "GET", remote: str = "203.0.113.9", forwarded: str = ""):
    """One request through the production WSGI application (the fast path)."""
    from shorturl_project.wsgi import application

    environ = {"PATH_INFO": path, "REQUEST_METHOD": method, "wsgi.input": io.BytesIO()}
    setup_testing_defaults(environ)
    environ.update(HTTP_HOST="testserver", REMOTE_ADDR=remote)
    if forwarded:
        environ["HTTP_X_FORWARDED_FOR"] = forwarded
    captured = {}

    def start_response(status, headers, exc_info=None):
        captured["status"], captured["headers"] = status, dict(headers)

    body = b"".join(application(environ, start_response))
    return int(captured["status"][:3]), captured["headers"], body


def _unknown(n: int) -> str:
    return f"/no-such-link-{n}"


def test_unknown_codes_past_the_rate_answer_429_and_real_links_still_redirect(settings, user):
    settings.SHORTURL_NOT_FOUND_RATE = "5/min"
    link = UrlLinkFactory(owner=user, long_url="https://example.com/still-here")

    assert [_call(_unknown(n))[0] for n in range(5)] == [404] * 5
    status, headers, body = _call(_unknown(5))
    assert status == 429
    assert 0 < int(headers["Retry-After"]) <= 60
    assert headers["Content-Type"].startswith("text/html")
    assert b"Too many" in body
    assert headers["X-Frame-Options"] == "DENY"
    assert _call(_unknown(6), method="HEAD")[0] == 429

    status, headers, _ = _call(f"/{link.code}")
    assert (status, headers["Location"]) == (302, "https://example.com/still-here")
    assert _call(_unknown(7), remote="198.51.100.4")[0] == 404  # someone else


def test_the_django_view_counts_the_same_way(client, settings):
    """runserver and the fast path's fallback answer through the view."""
    settings.SHORTURL_NOT_FOUND_RATE = "3/min"
    assert [client.get(_unknown(n)).status_code for n in range(3)] == [404] * 3
    response = client.get(_unknown(3))
    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= 60
    assert b"Too many" in response.content


def test_the_client_behind_a_trusted_proxy_is_counted_not_the_proxy(settings):
    settings.SHORTURL_NOT_FOUND_RATE = "2/min"
    settings.NUM_PROXIES = 1
    proxy = "10.0.0.1"
    for n in range(2):
        # A client may write anything left of what the proxy appends: it buys no new budget.
        assert _call(_unknown(n), remote=proxy, forwarded=f"192.0.2.{n}, 203.0.113.5")[0] == 404
    assert _call(_unknown(2), remote=proxy, forwarded="192.0.2.99, 203.0.113.5")[0] == 429
    assert _call(_unknown(3), remote=proxy, forwarded="203.0.113.6")[0] == 404


def test_an_ipv6_client_cannot_rotate_through_its_own_64(settings):
    settings.SHORTURL_NOT_FOUND_RATE = "2/min"
    assert _call(_unknown(0), remote="2001:db8:1:2::1")[0] == 404
    assert _call(_unknown(1), remote="2001:db8:1:2::2")[0] == 404
    assert _call(_unknown(2), remote="2001:db8:1:2:ffff::3")[0] == 429
    assert _call(_unknown(3), remote="2001:db8:1:3::1")[0] == 404  # another network


def test_the_default_rate_leaves_a_person_alone():
    """Someone mistyping links, even a hundred in a minute, never meets the limit."""
    assert {_call(_unknown(n))[0] for n in range(100)} == {404}


def test_an_empty_rate_turns_the_limit_off(settings):
    settings.SHORTURL_NOT_FOUND_RATE = ""
    assert {_call(_unknown(n))[0] for n in range(5)} == {404}


def test_the_counter_holds_a_bounded_number_of_clients_and_counts_the_rest_together(
    settings, monkeypatch
):
    """Addresses past the bound do not grow memory; they share one count, so a flood from more
    addresses than the table holds still meets the limit."""
    settings.SHORTURL_NOT_FOUND_RATE = "2/min"
    monkeypatch.setattr(not_found_limit, "MAX_CLIENTS", 3)
    for n in range(3):
        _call(_unknown(n), remote=f"198.51.100.{n}")
    assert _call(_unknown(3), remote="198.51.100.3")[0] == 404  # past the bound: shared count
    assert _call(_unknown(4), remote="198.51.100.4")[0] == 404
    assert _call(_unknown(5), remote="198.51.100.5")[0] == 429  # the others' third 404
    assert not_found_limit.clients_counted() == 4  # three clients and the shared count
    assert _call(_unknown(0), remote="198.51.100.0")[0] == 404  # counted on its own: its 2nd


@pytest.mark.parametrize("rate", ["300", "many/min", "300/fortnight", "300/month", "0/min", "-5/s"])
def test_a_mistyped_rate_is_refused_with_what_to_write(rate):
    with pytest.raises(ImproperlyConfigured, match="300/min"):
        not_found_limit.parse_rate(rate)


def test_rates_read_like_the_apis():
    assert not_found_limit.parse_rate("300/min") == (300, 60)
    assert not_found_limit.parse_rate("5/s") == (5, 1)
    assert not_found_limit.parse_rate("1000/hour") == (1000, 3600)
    assert not_found_limit.parse_rate("") is None
