"""The published Shlink JS SDK (@shlinkio/shlink-js-sdk, pinned in shlink_client/ beside this
file) drives a live server through /rest/: what a Shlink dashboard or script would see.

Needs Node 20+ and npm; the SDK is installed with `npm ci` into a cache directory
(SHLINK_SDK_CACHE, else ~/.cache/shorturl/shlink-client-<hash of its lock and client.mjs>),
never into the checkout.
Without Node, npm or the registry the test is skipped with the reason, unless
SHLINK_SDK_REQUIRED=1 (CI), which turns that into a failure.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from accounts.services import api_key_create
from analytics.orphans import flush_orphans
from analytics.services import aggregate_hourly, flush_pending
from compat.shlink.tests.test_shlink_list import ORDERS
from links.models import UrlLink
from links.services.create import link_create
from links.services.domains import domain_save
from workspaces.selectors import personal_workspace_of

pytestmark = [pytest.mark.shlink_sdk, pytest.mark.django_db(transaction=True)]

CLIENT_DIR = Path(__file__).parent / "shlink_client"
INSTALL_TIMEOUT = 300
RUN_TIMEOUT = 60


def _unavailable(reason: str):
    if os.environ.get("SHLINK_SDK_REQUIRED") == "1":
        pytest.fail(f"SHLINK_SDK_REQUIRED=1 but {reason}")
    pytest.skip(reason)


def _cache_dir() -> Path:
    if os.environ.get("SHLINK_SDK_CACHE"):
        return Path(os.environ["SHLINK_SDK_CACHE"])
    # The client script too: a checkout with another script never shares this directory.
    files = [(CLIENT_DIR / name).read_bytes() for name in ("package-lock.json", "client.mjs")]
    digest = hashlib.sha256(b"\0".join(files)).hexdigest()[:12]
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache_home / "shorturl" / f"shlink-client-{digest}"


@pytest.fixture(scope="module")
def sdk_dir() -> Path:
    """A directory holding the client script and the pinned SDK in node_modules."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        _unavailable("Node.js and npm are needed to run the Shlink SDK (apt install nodejs npm)")
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0] or 0) < 20:
        _unavailable(f"the Shlink SDK needs Node 20+ (fetch); found {version}")
    target = _cache_dir()
    target.mkdir(parents=True, exist_ok=True)
    # The directory is shared by every checkout and pass (make test and make test-services may
    # run at once): one installs at a time, and the others wait and find it installed.
    with open(target.with_name(target.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _install(npm, target)
    return target


def _install(npm: str, target: Path) -> None:
    for name in ("package.json", "package-lock.json", "client.mjs"):
        if (
            not (target / name).exists()
            or (target / name).read_bytes() != (CLIENT_DIR / name).read_bytes()
        ):
            shutil.copyfile(CLIENT_DIR / name, target / name)
    if not (target / "node_modules/@shlinkio/shlink-js-sdk/package.json").exists():
        try:
            installed = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
                cwd=target,
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            _unavailable(f"npm ci did not finish in {INSTALL_TIMEOUT} s (registry unreachable?)")
        if installed.returncode != 0:
            _unavailable(f"npm ci failed (registry unreachable?): {installed.stderr[-500:]}")


def run_client(sdk_dir: Path, phase: str, *, url: str, api_key: str) -> dict:
    env = {**os.environ, "SHLINK_URL": url, "SHLINK_API_KEY": api_key}
    done = subprocess.run(
        ["node", "client.mjs", phase],
        cwd=sdk_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert done.returncode == 0, f"client.mjs {phase} failed: {done.stderr}"
    return json.loads(done.stdout)


def test_the_shlink_sdk_creates_lists_edits_reads_visits_and_deletes(
    sdk_dir, live_server, user, staff_user
):
    _, api_key = api_key_create(user=user, name="Shlink SDK")
    url = live_server.url
    host = url.split("://", 1)[1]

    before = run_client(sdk_dir, "before-visits", url=url, api_key=api_key)

    assert before["health"]["status"] == "pass"
    created = before["created"]
    assert created["shortCode"] == "sdk-spring"
    assert created["shortUrl"] == f"{url}/sdk-spring"
    assert created["longUrl"] == "https://example.com/spring"
    assert sorted(created["tags"]) == ["Spring", "sdk"]
    assert created["title"] == "Spring sale"
    assert created["domain"] is None
    assert created["visitsSummary"] == {"total": 0, "nonBots": 0, "bots": 0}
    assert before["takenSlug"]["error"]["type"] == "https://shlink.io/api/error/non-unique-slug"
    assert before["takenSlug"]["error"]["status"] == 400
    listed = before["listed"]
    assert [item["shortCode"] for item in listed["data"]] == ["sdk-spring"]
    assert listed["pagination"]["totalItems"] == 1
    assert before["edited"]["longUrl"] == "https://example.com/summer"
    assert before["fetched"]["longUrl"] == "https://example.com/summer"
    assert before["redirects"] == [
        {"status": 302, "location": "https://example.com/summer"},
        {"status": 302, "location": "https://example.com/summer"},
    ]
    domains = before["domains"]["data"]
    # The default domain where the SDK reaches it: the live server's host and port.
    assert [(d["domain"], d["isDefault"]) for d in domains] == [(host, True)]
    domain_host = host.split(":")[0]
    assert before["wrongKey"]["error"]["type"] == "https://shlink.io/api/error/invalid-api-key"

    # What the worker does every few seconds: store the visits, then the hourly sums; and what
    # each web process does with the orphan visits it counted.
    flush_pending()
    aggregate_hourly()
    flush_orphans()

    after = run_client(sdk_dir, "after-visits", url=url, api_key=api_key)

    visits = after["visits"]
    assert visits["pagination"]["totalItems"] == 2
    assert [v["potentialBot"] for v in visits["data"]] == [True, False]  # newest first
    assert visits["data"][1]["userAgent"].startswith("Mozilla/5.0")
    assert visits["data"][1]["visitedUrl"] == f"{url}/sdk-spring"
    assert [v["potentialBot"] for v in after["people"]["data"]] == [False]
    assert sorted(after["tags"]["data"]) == ["Spring", "sdk"]
    stats = {row["tag"]: row for row in after["tagsStats"]["data"]}
    assert stats["sdk"]["shortUrlsCount"] == 1
    assert stats["sdk"]["visitsSummary"] == {"total": 2, "nonBots": 1, "bots": 1}
    assert after["summary"] == {"total": 2, "nonBots": 1, "bots": 1}
    assert after["deleted"] is True
    assert after["afterDelete"]["error"]["type"] == (
        "https://shlink.io/api/error/short-url-not-found"
    )
    assert after["goneRedirect"] == 410  # deleted = revoked here: the short URL is gone
    assert after["listedAfterDelete"]["data"] == []

    _, staff_key = api_key_create(user=staff_user, name="Shlink SDK (staff)")
    orphans = run_client(sdk_dir, "orphans", url=url, api_key=staff_key)

    assert orphans["overview"]["orphanVisits"] == {"total": 1, "nonBots": 1, "bots": 0}
    assert orphans["overview"]["nonOrphanVisits"]["total"] == 0  # the link was deleted
    invalid = orphans["invalid"]
    assert invalid["pagination"]["totalItems"] == 1
    # The host as counted, without the live server's port (orphan counts keep none).
    assert [v["visitedUrl"] for v in invalid["data"]] == [f"http://{domain_host}/sdk-missing"]
    assert invalid["data"][0]["type"] == "invalid_short_url"
    assert orphans["roots"]["data"] == []


def test_the_shlink_sdk_lists_without_links_past_their_limits_and_lists_usable_domains(
    sdk_dir, live_server, user, other_user, staff_user
):
    """excludeMaxVisitsReached and excludePastValidUntil as the SDK sends them, a capped link's
    limit reached by a visitor's redirect (the live count, not the row's); listDomains as a key
    that may not manage domains sees them (none kept for another workspace, no redirects) and
    as staff see them (with the redirects)."""
    _, api_key = api_key_create(user=user, name="Shlink SDK")
    url = live_server.url
    domain_host = url.split("://", 1)[1]  # with the port, where the SDK reaches it
    link_create(
        user=user,
        long_url="https://example.com/expired",
        alias="sdk-expired",
        expires_at=timezone.now() + timedelta(hours=1),
    )
    UrlLink.objects.filter(code="sdk-expired").update(
        expires_at=timezone.now() - timedelta(hours=1)
    )
    domain_save(host="promo.example.test", root_redirect="https://example.com/promo")
    domain_save(host="kept.example.test", workspace=personal_workspace_of(other_user))

    limits = run_client(sdk_dir, "limits", url=url, api_key=api_key)

    assert limits["cappedRedirects"][0] == 302
    assert limits["cappedRedirects"][1] != 302  # its one visit taken
    assert limits["all"] == ["sdk-capped", "sdk-expired", "sdk-open"]
    assert limits["notMaxed"] == ["sdk-expired", "sdk-open"]
    assert limits["notPast"] == ["sdk-capped", "sdk-open"]
    assert limits["neither"] == ["sdk-open"]
    no_redirects = {
        "baseUrlRedirect": None,
        "regular404Redirect": None,
        "invalidShortUrlRedirect": None,
    }
    domains = limits["domains"]
    assert [(d["domain"], d["isDefault"]) for d in domains["data"]] == [
        (domain_host, True),
        ("promo.example.test", False),
    ]
    assert [d["redirects"] for d in domains["data"]] == [no_redirects, no_redirects]

    _, staff_key = api_key_create(user=staff_user, name="Shlink SDK (staff)")
    managed = run_client(sdk_dir, "managed-domains", url=url, api_key=staff_key)["domains"]
    # A key acts for one workspace: staff's too leaves out the domain kept for another.
    by_host = {d["domain"]: d for d in managed["data"]}
    assert set(by_host) == {domain_host, "promo.example.test"}
    assert by_host["promo.example.test"]["redirects"]["baseUrlRedirect"] == (
        "https://example.com/promo"
    )


def test_the_shlink_sdk_drives_every_list_control_of_the_web_ui(sdk_dir, live_server, user, four):
    """Every order the web UI offers, `tags[]` any (Shlink's default) or all, a span of creation
    dates as the UI sends it, a bad date's problem; and the default domain's health asked of the
    authority listDomains names (the live server's port included)."""
    _, api_key = api_key_create(user=user, name="Shlink SDK")
    url = live_server.url

    controls = run_client(sdk_dir, "controls", url=url, api_key=api_key)

    expected = {order: [four[name].code for name in names] for order, names in ORDERS.items()}
    assert controls["orders"] == expected
    assert controls["anyTag"] == sorted(four[name].code for name in "ABC")
    assert controls["everyTag"] == [four["A"].code]
    assert controls["span"] == [four["B"].code]  # made 2 days ago
    assert controls["badDate"]["error"]["type"] == "https://shlink.io/api/error/invalid-data"
    assert controls["badDate"]["error"]["invalidElements"] == ["startDate"]
    assert controls["defaultDomain"] == url.split("://", 1)[1]
    assert controls["defaultDomainHealth"]["status"] == "pass"


def test_the_shlink_sdk_sets_and_reads_redirect_rules_and_visitors_follow_them(
    sdk_dir, live_server, user
):
    """setShortUrlRedirectRules and getShortUrlRedirectRules as the web UI's rules page calls
    them: Shlink's shapes back (the wildcard as the network it is), a browser condition refused
    with Shlink's invalid-data problem, and the redirect sending each visitor as the rules say
    (the live server's visitors come from 127.0.0.1)."""
    _, api_key = api_key_create(user=user, name="Shlink SDK")

    rules = run_client(sdk_dir, "redirect-rules", url=live_server.url, api_key=api_key)

    expected = [
        {
            "longUrl": "https://example.com/spring-on-android",
            "priority": 1,
            "conditions": [
                {"type": "device", "matchKey": None, "matchValue": "android"},
                {"type": "query-param", "matchKey": "campaign", "matchValue": "spring"},
            ],
        },
        {
            "longUrl": "https://example.com/office",
            "priority": 2,
            "conditions": [{"type": "ip-address", "matchKey": None, "matchValue": "127.0.0.0/16"}],
        },
    ]
    assert rules["set"] == {
        "defaultLongUrl": "https://example.com/rules",
        "redirectRules": expected,
    }
    assert rules["read"] == rules["set"]
    refused = rules["refused"]["error"]
    assert refused["type"] == "https://shlink.io/api/error/invalid-data"
    assert refused["invalidElements"] == ["redirectRules"]
    assert rules["hasRedirectRules"] is True
    assert rules["androidInSpring"] == "https://example.com/spring-on-android?campaign=spring"
    assert rules["fromHere"] == "https://example.com/office"
    assert UrlLink.objects.get(code="sdk-rules").rules == [
        {
            "os": "Android",
            "query": {"campaign": "spring"},
            "url": "https://example.com/spring-on-android",
        },
        {"ip": "127.0.0.0/16", "url": "https://example.com/office"},
    ]
