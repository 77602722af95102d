"""Real User-Agents and visit messages for the analytics tests (importable, unlike conftest)."""

import datetime as dt
import json
import uuid

from analytics.messages import WIRE_KEYS

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


def visit_message(
    link, *, ip="203.0.113.1", ua=CHROME_MAC, at=None, referrer="", event=None
) -> str:
    """A visit message as the redirect hands it off (analytics.messages), at any moment."""
    at = at or dt.datetime.now(dt.UTC)
    fields = {
        "event_id": event or uuid.uuid4().hex,
        "link_id": link.pk,
        "code": link.code,
        "visit_time": at.timestamp(),
        "client_ip": ip,
        "user_agent": ua,
        "referrer": referrer,
    }
    return json.dumps({WIRE_KEYS[name]: value for name, value in fields.items()})
