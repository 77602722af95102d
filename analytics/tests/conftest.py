"""Helpers for the analytics tests: a short link to click and a way to click it."""

import datetime as dt
import json
import uuid

import pytest
from django.test import Client

from links.services.create import link_create

CHROME_MAC = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
)
SAFARI_IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1"
)
WECHAT_ANDROID = (
    "Mozilla/5.0 (Linux; Android 10; MI 8 Build/QKQ1.190828.002; wv) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Version/4.0 Chrome/86.0.4240.99 XWEB/4317 MMWEBSDK/20220903 "
    "Mobile Safari/537.36 MMWEBID/6293 MicroMessenger/8.0.28.2240(0x28001C35) WeChat/arm64 "
    "Weixin NetType/WIFI Language/zh_CN ABI/arm64"
)
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
SLACKBOT = "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"
FIREFOX_WINDOWS = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0"
SAFARI_IPAD = (
    "Mozilla/5.0 (iPad; CPU OS 16_0 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/16.0 Mobile/15E148 Safari/604.1"
)


def record(link, *, ip="203.0.113.1", ua=CHROME_MAC, at=None, referrer="", event=None) -> str:
    """A buffered visit record as capture.build_visit_record writes it, at any moment."""
    at = at or dt.datetime.now(dt.UTC)
    return json.dumps(
        {
            "e": event or uuid.uuid4().hex,
            "l": link.pk,
            "c": link.code,
            "t": at.timestamp(),
            "i": ip,
            "u": ua,
            "r": referrer,
        }
    )


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
