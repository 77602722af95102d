"""Helpers for the analytics tests: a short link to click and a way to click it."""

import pytest
from django.test import Client

from analytics import buffer, enrich
from analytics.tests.visits import CHROME_MAC
from core import geodata
from core.redis_conn import redis_client
from links.services.create import link_create


@pytest.fixture(autouse=True)
def _geoip_2018(monkeypatch):
    """Places and ISPs here are those of the set-up without make's GeoIP data: the 2018 GeoLite2
    City file, no ASN file. test_geodata.py checks the data make installs (issue #13)."""
    monkeypatch.setattr(geodata, "DATA_DIR", geodata.DATA_DIR / "not-in-these-tests")
    enrich.clear_caches()
    yield
    enrich.clear_caches()


@pytest.fixture
def make_link(user):
    def make(url: str = "https://example.com/landing", **options):
        return link_create(user=user, long_url=url, **options).link

    return make


@pytest.fixture
def click():
    """GET /<code> like a browser would: returns the response."""
    client = Client()

    def do(link, *, ip: str = "203.0.113.9", ua: str = CHROME_MAC, referrer: str = "", **meta):
        headers = {"REMOTE_ADDR": ip, "HTTP_USER_AGENT": ua, **meta}
        if referrer:
            headers["HTTP_REFERER"] = referrer
        return client.get(f"/{link.code}", **headers)

    return do


@pytest.fixture
def redis_buffer(requires_redis):
    """redis_buffer(*messages) pushes visit messages onto the buffer as redirects do;
    redis_buffer.client is the Redis client."""
    client = redis_client()

    def push(*messages):
        client.rpush(buffer.VISITS_KEY, *messages)

    push.client = client
    return push
