"""Retention and erasure (#30) over HTTP against both deployments: erasing one visitor removes
exactly their raw visits, a retention pass with 0 days removes every raw visit of the workspace,
and the stats API answers the same before and after each (totals, unique visitors, series,
breakdowns)."""

from __future__ import annotations

import datetime as dt
import secrets

import harness
from harness import get_fresh

CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
PEOPLE = [f"8.8.{n}.{n + 10}" for n in range(1, 7)]


def _raw_visits(dep: harness.Deployment, code: str, ip: str = "") -> int:
    """The raw visits (VisitRecord rows) of the link stored in the database, of `ip` if given."""
    where = f"code={code!r}" + (f", client_ip={ip!r}" if ip else "")
    out = dep.manage(
        "shell",
        "-c",
        f"from analytics.models import VisitRecord; print(VisitRecord.objects.filter({where})"
        ".count())",
    )
    return int(out.strip().splitlines()[-1])


def _stats(dep: harness.Deployment, code: str, start: str, end: str) -> dict:
    return harness.api_get(dep, f"/api/v1/links/{code}/stats/", start=start, end=end)


def test_erasure_and_a_0_day_retention_pass_delete_raw_visits_and_keep_every_figure(deployment):
    dep = deployment
    slug = f"ret-{secrets.token_hex(4)}"
    with dep.api() as api:
        made = api.post(dep.url("/api/v1/workspaces/"), json={"name": slug, "slug": slug})
    assert made.status_code == 201, made.text
    code = harness.create_link(dep, harness.unique_url("retention"), workspace=slug)["code"]
    for ip in PEOPLE:
        for _ in range(2):
            answer = get_fresh(dep.port, f"/{code}", {"X-Forwarded-For": ip, "User-Agent": CHROME})
            assert answer.status == 302
    get_fresh(dep.port, f"/{code}", {"X-Forwarded-For": "203.0.113.7", "User-Agent": GOOGLEBOT})
    seen = harness.wait_for_visits(dep, code, 13, timeout=40)
    assert seen.stored == 13, seen.history
    now = dt.datetime.now(dt.UTC).replace(minute=0, second=0, microsecond=0)
    start, end = (now - dt.timedelta(days=1)).isoformat(), (now + dt.timedelta(hours=2)).isoformat()
    before = _stats(dep, code, start, end)
    assert (before["total_clicks"], before["unique_visitors"], before["bot_clicks"]) == (12, 6, 1)
    assert _raw_visits(dep, code) == 13

    with dep.api() as api:
        erased = api.post(dep.url(f"/api/v1/workspaces/{slug}/erasure/"), json={"ip": PEOPLE[0]})
    assert erased.status_code == 200, erased.text
    assert erased.json() == {"visits": 2, "links": 1}
    assert _raw_visits(dep, code, PEOPLE[0]) == 0
    assert _raw_visits(dep, code) == 11  # exactly hers went
    assert _stats(dep, code, start, end) == before

    with dep.api() as api:
        set_days = api.patch(dep.url(f"/api/v1/workspaces/{slug}/"), json={"raw_retention_days": 0})
    assert set_days.status_code == 200, set_days.text
    out = dep.manage("apply_retention")
    assert f"{slug}: 11" in out, out
    assert _raw_visits(dep, code) == 0
    assert _stats(dep, code, start, end) == before
    listed = harness.api_get(dep, f"/api/v1/links/{code}/")
    assert listed["clicks"] == 12
