"""Issue #15's rules and variants over HTTP against both deployments: a link made through the API
sends an iPhone in China set to Chinese to its rule's URL and everyone else to a 70/30 split of
variants, each person always to the same one; after processing, the stats API's destinations
breakdown counts where people went."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import harness
from harness import get_fresh, visitor_headers

IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
)
WINDOWS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)
CHINA = "223.5.5.5"  # AliDNS, in China in every GeoIP database
PEOPLE = 1000  # distinct visitors on the split: ±5 points is more than 3 standard deviations
REPEATS = 100  # of them come back


def _targeted_link(deployment) -> tuple[str, dict[str, str]]:
    urls = {
        "long": harness.unique_url("rules-long"),
        "rule": harness.unique_url("rules-cn"),
        "a": harness.unique_url("rules-a"),
        "b": harness.unique_url("rules-b"),
    }
    link = harness.create_link(
        deployment,
        urls["long"],
        rules=[
            {
                "device": "mobile",
                "os": "iOS",
                "country": "CN",
                "language": "zh",
                "url": urls["rule"],
            }
        ],
        variants=[{"url": urls["a"], "weight": 70}, {"url": urls["b"], "weight": 30}],
    )
    assert link["rules"] == [
        {"device": "mobile", "os": "iOS", "country": "CN", "language": "zh", "url": urls["rule"]}
    ], link
    assert link["variants"] == [
        {"url": urls["a"], "weight": 70},
        {"url": urls["b"], "weight": 30},
    ], link
    return link["code"], urls


def _destination(deployment, code: str, headers: dict[str, str]) -> str:
    answer = get_fresh(deployment.port, f"/{code}", headers)
    assert answer.status == 302, f"GET /{code} with {headers} → {answer.status} {answer.body[:200]}"
    return answer.location


def test_a_rule_takes_its_visitors_and_the_rest_split_70_30_each_keeping_theirs(deployment):
    code, urls = _targeted_link(deployment)
    chinese_iphone = {"X-Forwarded-For": CHINA, "User-Agent": IPHONE, "Accept-Language": "zh-CN"}
    assert _destination(deployment, code, chinese_iphone) == urls["rule"]
    # Every condition must match: the same iPhone in China set to English is not the rule's.
    english = {**chinese_iphone, "Accept-Language": "en-US,en;q=0.9"}
    desktop = {"X-Forwarded-For": "8.8.8.8", "User-Agent": WINDOWS, "Accept-Language": "zh-CN"}
    variants = {urls["a"], urls["b"]}
    others = [_destination(deployment, code, english), _destination(deployment, code, desktop)]
    assert set(others) <= variants, others

    with ThreadPoolExecutor(16) as pool:
        first = list(
            pool.map(lambda i: _destination(deployment, code, visitor_headers(i)), range(PEOPLE))
        )
        again = list(
            pool.map(lambda i: _destination(deployment, code, visitor_headers(i)), range(REPEATS))
        )
    assert set(first) <= variants, f"people sent elsewhere: {set(first) - variants}"
    share_a = 100 * first.count(urls["a"]) / PEOPLE
    harness.note(deployment, "variants 70/30", f"{share_a:.1f}% of {PEOPLE} people on variant A")
    assert 65 <= share_a <= 75, f"{share_a:.1f}% of {PEOPLE} people got variant A (70 wanted)"
    changed = [i for i in range(REPEATS) if again[i] != first[i]]
    assert not changed, f"{len(changed)} of {REPEATS} people got another variant the second time"

    clicks = 3 + PEOPLE + REPEATS
    seen = harness.wait_for_visits(deployment, code, clicks, timeout=90)
    assert seen.stored == clicks, f"stored {seen.stored} of {clicks}: {seen.history}"
    stats = harness.stats(deployment, code)
    assert stats["total_clicks"] == clicks, stats["total_clicks"]
    went = {entry["url"]: entry["clicks"] for entry in stats["destinations"]}
    sent = others + first + again
    expected = {urls["rule"]: 1, urls["a"]: sent.count(urls["a"]), urls["b"]: sent.count(urls["b"])}
    assert went == expected, f"destinations {stats['destinations']}, expected {expected}"
