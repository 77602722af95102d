"""The `yourls` client from PyPI (what YOURLS tools are built on) against a live server: every call
it offers gives back the values it read from our answers, and its own exceptions where YOURLS
would raise them ("already exists" carrying the existing short URL, a taken keyword, a refused
URL, a refused sign-in)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone
from yourls import (
    DBStats,
    YOURLSClient,
    YOURLSHTTPError,
    YOURLSKeywordExistsError,
    YOURLSNoLoopError,
    YOURLSNoURLError,
    YOURLSURLExistsError,
)

from accounts.services import api_key_create
from analytics.models import HourlyClick
from links.models import UrlLink
from links.tests.factories import UrlLinkFactory

pytestmark = pytest.mark.django_db(transaction=True)

SPRING = "https://www.example.com/spring?utm_source=yourls"


@pytest.fixture
def api_url(live_server) -> str:
    return f"{live_server.url}/yourls-api.php"


@pytest.fixture
def client(api_url, user) -> YOURLSClient:
    return YOURLSClient(api_url, signature=api_key_create(user=user, name="yourls")[1])


def test_shorten_expand_and_url_stats(client, live_server, user):
    before = datetime.now(UTC).replace(microsecond=0, tzinfo=None)

    shortened = client.shorten(SPRING)

    link = UrlLink.objects.get(owner=user)
    assert shortened.keyword == link.code
    assert shortened.shorturl == f"{live_server.url}/{link.code}"
    assert shortened.url == SPRING
    assert shortened.title == ""
    assert before <= shortened.date <= before + timedelta(minutes=1)  # UTC
    assert shortened.clicks == 0

    assert client.expand(shortened.shorturl) == SPRING
    assert client.expand(link.code) == SPRING

    HourlyClick.objects.create(
        link=link, hour=timezone.now() - timedelta(hours=3), clicks=5, unique_visitors=4
    )
    stats = client.url_stats(shortened.shorturl)
    assert stats.shorturl == shortened.shorturl
    assert stats.url == SPRING
    assert stats.clicks == 5
    assert stats.date == shortened.date


def test_an_existing_url_raises_the_clients_exists_error_with_the_existing_link(client):
    first = client.shorten(SPRING)

    with pytest.raises(YOURLSURLExistsError) as exists:
        client.shorten(SPRING)

    assert exists.value.url.shorturl == first.shorturl
    assert exists.value.url.keyword == first.keyword
    assert "already exists in database" in str(exists.value)
    assert UrlLink.objects.count() == 1


def test_keywords_titles_and_refusals(client, live_server, other_user):
    named = client.shorten("https://www.example.com/a", keyword="spring-sale", title="Spring sale")
    assert named.shorturl == f"{live_server.url}/spring-sale"
    assert named.title == "Spring sale"

    with pytest.raises(YOURLSKeywordExistsError) as taken:
        client.shorten("https://www.example.com/b", keyword="spring-sale")
    assert taken.value.keyword == "spring-sale"
    assert "“spring-sale-2” is free" in str(taken.value)

    with pytest.raises(YOURLSNoURLError, match="Only http and https"):
        client.shorten("ftp://files.example.com/a.pdf")
    with pytest.raises(YOURLSNoLoopError):
        client.shorten(f"{live_server.url}/spring-sale")

    theirs = UrlLinkFactory(owner=other_user)
    with pytest.raises(YOURLSHTTPError, match="short URL not found"):
        client.expand(theirs.code)
    with pytest.raises(YOURLSHTTPError, match="short URL not found"):
        client.url_stats(f"{live_server.url}/{theirs.code}")


def test_stats_and_db_stats(client, user, other_user):
    links = [client.shorten(f"https://www.example.com/{n}") for n in range(3)]
    for link, clicks in zip(links, (2, 7, 1), strict=True):
        HourlyClick.objects.create(
            link=UrlLink.objects.get(code=link.keyword),
            hour=timezone.now() - timedelta(hours=1),
            clicks=clicks,
            unique_visitors=clicks,
        )
    UrlLinkFactory(owner=other_user)  # not theirs

    top, totals = client.stats("top", limit=2)
    assert [(item.url, item.clicks) for item in top] == [
        ("https://www.example.com/1", 7),
        ("https://www.example.com/0", 2),
    ]
    assert totals == DBStats(total_clicks=10, total_links=3)
    bottom, _ = client.stats("bottom", limit=1)
    assert bottom[0].url == "https://www.example.com/2"
    last, _ = client.stats("last", limit=3)
    assert {item.shorturl for item in last} == {link.shorturl for link in links}
    random, _ = client.stats("random", limit=3)
    assert len(random) == 3

    assert client.db_stats() == DBStats(total_clicks=10, total_links=3)


def test_credentials(api_url, user):
    with_password = YOURLSClient(api_url, username="marketer", password="s3cret-pass-1")
    assert with_password.db_stats() == DBStats(total_clicks=0, total_links=0)

    with pytest.raises(YOURLSHTTPError, match="Please log in") as refused:
        YOURLSClient(api_url, signature="su_not-a-key").db_stats()
    assert refused.value.response.status_code == 403
    with pytest.raises(YOURLSHTTPError, match="Invalid username or password"):
        YOURLSClient(api_url, username="marketer", password="wrong").db_stats()
    with pytest.raises(YOURLSHTTPError, match="Please log in"):
        YOURLSClient(api_url).db_stats()


def test_with_passwords_off_the_clients_password_is_refused_and_its_signature_works(
    api_url, user, sso_settings
):
    # Single sign-on with LOCAL_PASSWORDS=0 (docs/sso.md): YOURLS tools keep working with an
    # API key as their signature; their username and password are refused like a wrong one.
    sso_settings.LOCAL_PASSWORDS = False
    with pytest.raises(YOURLSHTTPError, match="Invalid username or password"):
        YOURLSClient(api_url, username="marketer", password="s3cret-pass-1").db_stats()
    signed = YOURLSClient(api_url, signature=api_key_create(user=user, name="tool")[1])
    assert signed.db_stats() == DBStats(total_clicks=0, total_links=0)
