"""GET /<code> as a visitor sees it, and what it costs the database."""

from datetime import timedelta

import pytest
from django.utils import timezone

from core.redis_conn import uses_redis
from links.codes import shape
from links.services.change import link_revoke
from links.tests.factories import UrlLinkFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def link(user):
    return UrlLinkFactory(owner=user, long_url="https://example.com/target?x=1")


def test_a_link_redirects_with_302_and_no_browser_caching(client, link):
    response = client.get(f"/{link.code}")
    assert response.status_code == 302
    assert response["Location"] == "https://example.com/target?x=1"
    assert response["Cache-Control"] == "private, max-age=0"


@pytest.mark.parametrize("redirect_type", [301, 307, 308])
def test_the_links_redirect_type_is_used(client, user, redirect_type):
    link = UrlLinkFactory(owner=user, long_url="https://example.com/r", redirect_type=redirect_type)
    response = client.get(f"/{link.code}")
    assert response.status_code == redirect_type
    assert response["Location"] == "https://example.com/r"


def test_an_alias_redirects(client, user):
    UrlLinkFactory(owner=user, long_url="https://example.com/alias", alias="spring-sale")
    assert client.get("/spring-sale")["Location"] == "https://example.com/alias"


def _link_queries(queries) -> list[str]:
    """Queries that look a link up by its code (what the cache is there to spare)."""
    return [
        q["sql"]
        for q in queries
        if "links_urllink" in q["sql"] and "code" in q["sql"].split("WHERE", 1)[-1]
    ]


def test_a_cached_redirect_runs_no_link_query(client, link):
    """Zero queries with Redis; embedded mode writes only the visit itself (no worker there)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.get(f"/{link.code}")  # fills the cache
    with CaptureQueriesContext(connection) as captured:
        response = client.get(f"/{link.code}")
    assert response.status_code == 302
    assert _link_queries(captured.captured_queries) == []
    if uses_redis():
        assert captured.captured_queries == []


def test_a_cached_alias_redirect_runs_no_link_query(client, user):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    UrlLinkFactory(owner=user, alias="launch-day")
    client.get("/launch-day")
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/launch-day").status_code == 302
    assert _link_queries(captured.captured_queries) == []
    if uses_redis():
        assert captured.captured_queries == []


def test_an_unknown_random_code_is_404_without_a_query(
    client, django_assert_num_queries, domain_table
):
    garbage = [shape.random_code()[:-1] + "x" for _ in range(20)]
    garbage = [code for code in garbage if not shape.has_valid_check(code)]
    with django_assert_num_queries(0):
        for code in garbage:
            response = client.get(f"/{code}")
            assert response.status_code == 404
    assert b"does not exist" in response.content
    assert response["Content-Type"].startswith("text/html")


def test_a_valid_but_unknown_code_is_looked_up_once_then_cached(
    client, django_assert_num_queries, domain_table
):
    code = shape.random_code()
    with django_assert_num_queries(1):
        assert client.get(f"/{code}").status_code == 404
    with django_assert_num_queries(0):
        assert client.get(f"/{code}").status_code == 404


def test_unknown_alias_shaped_paths_are_404_pages(client):
    response = client.get("/no-such-alias")
    assert response.status_code == 404
    assert b"does not exist" in response.content
    assert client.get("/bad%20code!").status_code == 404


def test_a_revoked_link_answers_410_at_once_even_when_cached(client, user, link):
    assert client.get(f"/{link.code}").status_code == 302  # now cached
    link_revoke(code=link.code, user=user)
    response = client.get(f"/{link.code}")
    assert response.status_code == 410
    assert b"no longer available" in response.content


def test_an_expired_link_answers_410(client, user):
    link = UrlLinkFactory(owner=user, expires_at=timezone.now() + timedelta(seconds=60))
    assert client.get(f"/{link.code}").status_code == 302  # cached with its expiry
    from links.models import UrlLink

    UrlLink.objects.filter(pk=link.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    from links import cache as link_cache

    link_cache.drop(link.code)
    assert client.get(f"/{link.code}").status_code == 410


def test_a_cached_entry_expires_on_time_without_the_database(client, user):
    soon = timezone.now() + timedelta(seconds=60)
    link = UrlLinkFactory(owner=user, expires_at=soon)
    client.get(f"/{link.code}")
    from links import cache as link_cache

    entry = link_cache.get_entry(link.code)
    assert not entry.is_gone(now=soon.timestamp() - 1)
    assert entry.is_gone(now=soon.timestamp() + 1)


def test_codes_differing_only_in_case_are_different_links(client, user):
    UrlLinkFactory(owner=user, long_url="https://example.com/one", alias="MixedCase")
    UrlLinkFactory(owner=user, long_url="https://example.com/two", alias="mixedcase")
    assert client.get("/MixedCase")["Location"] == "https://example.com/one"
    assert client.get("/mixedcase")["Location"] == "https://example.com/two"


@pytest.mark.parametrize(
    ("long_url", "location"),
    [
        ("https://bücher.example/straße?q=ü", "https://xn--bcher-kva.example/stra%C3%9Fe?q=%C3%BC"),
        # IDNA 2003 would map ß to ss: a different domain, with another owner.
        ("https://faß.de/", "https://xn--fa-hia.de/"),
        ("https://BÜCHER.de:8443/x", "https://xn--bcher-kva.de:8443/x"),
        ("https://user:pw@bücher.example/", "https://user:pw@xn--bcher-kva.example/"),
    ],
)
def test_a_unicode_url_redirects_to_its_ascii_form(client, user, long_url, location):
    link = UrlLinkFactory(owner=user, long_url=long_url)
    response = client.get(f"/{link.code}")
    assert response["Location"] == location


def test_head_requests_redirect_but_are_not_counted(client, link):
    from analytics.models import VisitRecord

    response = client.head(f"/{link.code}")
    assert response.status_code == 302
    assert response["Location"] == "https://example.com/target?x=1"
    client.get(f"/{link.code}")
    from django.core.management import call_command

    call_command("drain_visits", verbosity=0)  # services mode: store what the buffer holds
    assert VisitRecord.objects.filter(link=link).count() == 1


def test_a_push_whose_reply_times_out_is_counted_once(
    requires_redis, client, link, monkeypatch, caplog
):
    """The fused Lua call ran (the visit is in the buffer) but its reply was lost: the redirect
    still answers, its fallback stores the visit under the same event id, and the flush keeps
    one visit for that click, not two (and not none)."""
    from django.core.management import call_command
    from redis.exceptions import TimeoutError as RedisTimeout

    from analytics.models import VisitRecord
    from core.redis_conn import redis_client, reset_redis_state

    assert client.get(f"/{link.code}").status_code == 302  # cached (and one visit)
    redis = redis_client()
    real_evalsha = redis.evalsha
    lost = []

    def run_then_lose_the_reply(*args, **kwargs):
        """The script runs on the server; the reply never reaches the redirect."""
        reply = real_evalsha(*args, **kwargs)
        if not lost:
            lost.append(args)
            raise RedisTimeout("Timeout reading from socket")
        return reply

    monkeypatch.setattr(redis, "evalsha", run_then_lose_the_reply)
    with caplog.at_level("WARNING", logger="shorturl.redis"):
        response = client.get(f"/{link.code}")
    monkeypatch.undo()
    assert lost, "the redirect no longer reads the cache through a script; rewrite this test"
    assert response.status_code == 302
    assert response["Location"] == "https://example.com/target?x=1"
    assert "Redis is unreachable" in caplog.text  # the product's own fallback ran

    reset_redis_state()
    call_command("drain_visits", verbosity=0)
    assert VisitRecord.objects.filter(link=link).count() == 2


def test_error_pages_name_the_code_asked_for_escaped_each_time():
    """The 404/410 pages are rendered once per process and filled in per request: each still
    names its own code, escaped."""
    from serving.redirect import error_page

    first, second = error_page(404, "spring-sale"), error_page(404, "autumn-sale")
    assert "/spring-sale</code>" in first and "autumn-sale" not in first
    assert "/autumn-sale</code>" in second
    hostile = error_page(410, '<script>alert("x")</script>')
    assert "<script>alert" not in hostile
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in hostile
    assert "<html" in hostile.lower() and "expired or was switched off" in hostile


def test_the_redirect_views_answers_carry_the_sites_security_headers(client, link):
    """The Django view (runserver, the fast path's fallback) gets them from the middleware."""
    page = client.get("/zzzzzzz")
    assert page["X-Frame-Options"] == "DENY"
    assert page["X-Content-Type-Options"] == "nosniff"
    assert page["Referrer-Policy"] == "same-origin"
    redirect = client.get(f"/{link.code}")
    assert redirect["X-Content-Type-Options"] == "nosniff"
    # Not the site's "same-origin": the destination keeps the referring site (browsers' default).
    assert redirect["Referrer-Policy"] == "strict-origin-when-cross-origin"
