"""What the stats say about who clicked, checked over HTTP against the deployed product: bots by
name and kind apart from people, a tablet by its model, and the network (ISP) of public
addresses on the default set-up (GeoIP data installed by make)."""

from __future__ import annotations

import harness
from harness import get_fresh

CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)
BOTS = {
    "search": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "ai": "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; "
    "+claudebot@anthropic.com)",
    "library": "curl/8.5.0",
    "social": "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
    "automation": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "HeadlessChrome/131.0.6778.33 Safari/537.36",
}
# A Galaxy Tab A7 Lite: its browser says "Mobile"; the device model list knows it is a tablet.
TABLET_SAYING_MOBILE = (
    "Mozilla/5.0 (Linux; Android 11; SM-T225) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Mobile Safari/537.36"
)
# Public resolvers' addresses: their networks are stable and well known.
PEOPLE = {"8.8.8.8": "Google", "1.1.1.1": "Cloudflare", "2001:4860:4860::8888": "Google"}


def _visit(dep: harness.Deployment, code: str, ip: str, user_agent: str) -> None:
    answer = get_fresh(dep.port, f"/{code}", {"X-Forwarded-For": ip, "User-Agent": user_agent})
    assert answer.status == 302, f"GET /{code} as {user_agent[:40]!r} → {answer.status}"


def test_bots_by_kind_tablets_by_model_and_people_get_their_network(deployment):
    code = harness.create_link(deployment, harness.unique_url("analytics-truth"))["code"]
    for ip in PEOPLE:
        _visit(deployment, code, ip, CHROME)
    for user_agent in BOTS.values():
        _visit(deployment, code, "203.0.113.7", user_agent)
    _visit(deployment, code, "9.9.9.9", TABLET_SAYING_MOBILE)
    people = len(PEOPLE) + 1
    expected = people + len(BOTS)
    seen = harness.wait_for_visits(deployment, code, expected, timeout=40)
    assert seen.stored == expected, f"stored {seen.stored} of {expected}: {seen.history}"
    stats = harness.stats(deployment, code)

    assert (stats["total_clicks"], stats["bot_clicks"]) == (people, len(BOTS)), stats
    devices = {entry["name"]: entry["clicks"] for entry in stats["devices"]}
    assert devices == {"PC": len(PEOPLE), "Tablet": 1}, f"devices: {devices}"
    kinds = {entry["kind"]: entry["clicks"] for entry in stats["bot_kinds"]}
    assert kinds == dict.fromkeys(BOTS, 1), f"bots by kind: {stats['bot_kinds']}"
    names = " ".join(entry["name"] for entry in stats["bots"]).lower()
    assert "googlebot" in names and "claudebot" in names, f"bots by name: {stats['bots']}"

    networks = {entry["name"]: entry["clicks"] for entry in stats["isps"]}
    assert "Unknown" not in networks, f"people with no network on the default set-up: {networks}"
    for owner in set(PEOPLE.values()):
        assert any(owner.lower() in name.lower() for name in networks), (
            f"no {owner} network among {networks}"
        )
