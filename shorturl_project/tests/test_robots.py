"""`/robots.txt`: crawlers ask for it on every host all the time. It answered the redirect's 404
page and was counted atop "requests that reached no link" (issue #27); now it lets short links
be followed and keeps the app's pages and APIs out, on every short domain, counting nothing."""

from urllib.robotparser import RobotFileParser

import pytest

from analytics import orphans
from analytics.models import OrphanVisitCount
from links.services.create import link_create
from links.services.domains import domain_save
from links.tests.helpers import call_wsgi

pytestmark = pytest.mark.django_db(transaction=True)

GO = "go.example.test"


@pytest.fixture
def go(settings):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, GO]
    return domain_save(host=GO)


def _rules(body: bytes) -> RobotFileParser:
    parser = RobotFileParser()
    parser.parse(body.decode().splitlines())
    return parser


@pytest.mark.parametrize("host", ["testserver", GO])
def test_robots_txt_lets_short_links_be_followed_and_keeps_the_app_out(go, user, host):
    link = link_create(user=user, long_url="https://example.com/spring", alias="spring").link
    status, headers, body = call_wsgi("/robots.txt", extra={"HTTP_HOST": host})
    assert status == "200 OK"
    assert headers["Content-Type"] == "text/plain; charset=utf-8"
    assert "max-age=86400" in headers["Cache-Control"]
    rules = _rules(body)
    for path in (f"/{link.code}", "/aB3xY9k", "/spring/", "/v4"):
        assert rules.can_fetch("Googlebot", path), path
    for path in (
        "/dashboard/",
        "/dashboard/links/spring/",
        "/admin/",
        "/api/v1/links/",
        "/accounts/login/",
        "/workspaces/",
        "/rest/v3/short-urls",
        "/v4/shorten",
        "/yourls-api.php",
    ):
        assert not rules.can_fetch("Googlebot", path), path


def test_robots_txt_is_no_orphan_visit_and_never_rate_limited(settings):
    settings.SHORTURL_NOT_FOUND_RATE = "3/min"
    orphans.forget_counts()
    statuses = {call_wsgi("/robots.txt")[0] for _ in range(10)}
    assert statuses == {"200 OK"}
    assert call_wsgi("/robots.txt", method="HEAD")[0] == "200 OK"
    orphans.flush_orphans()
    assert not OrphanVisitCount.objects.filter(path="/robots.txt").exists()
