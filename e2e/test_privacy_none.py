"""Privacy mode "none" end to end (#30), in both modes: 50 people who click twice each are
counted as 100 clicks by 50 unique visitors, and afterwards no column of any table holds one of
their addresses, nor a hash of an address (or of address and User-Agent) that anyone could
compute without the window's secret: the whole database is dumped (sqlite3 .dump, mysqldump)
and searched. Once for a deployment started with ANALYTICS_PRIVACY=none (embedded), and in both
modes for a workspace whose owners chose "none" on the session's deployment, where other cases'
visitors are stored in full beside it."""

from __future__ import annotations

import hashlib
import hmac
import subprocess
import time
from urllib.parse import urlsplit

import harness
from harness import get_fresh

PEOPLE = 50


def _person(index: int) -> tuple[str, str]:
    """(address, User-Agent) of person `index`: public IPv4 addresses (IPv6 for every fifth),
    none of them a substring of another's, under a first octet harness.visitor_headers never
    gives: on the session's deployment other cases' visitors are stored in full."""
    if index % 5 == 0:
        return f"2a02:{index + 0x1100:x}:{index * 7 + 0x200:x}::{index + 0x31:x}", _agent(index)
    return f"89.{index + 40}.{index * 3 + 17}.{index + 101}", _agent(index)


def _agent(index: int) -> str:
    return harness.BROWSER_USER_AGENTS[index % len(harness.BROWSER_USER_AGENTS)]


def _dump(dep: harness.Deployment) -> str:
    url = urlsplit(dep.env["DATABASE_URL"])
    if dep.mode == "embedded":
        argv = ["sqlite3", url.path, ".dump"]
    else:
        argv = [
            "mysqldump",
            "--skip-extended-insert",  # one row a line: a failure shows the row
            f"--host={url.hostname}",
            f"--port={url.port or 3306}",
            f"--user={url.username}",
            url.path.lstrip("/"),
        ]
    return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=120).stdout


def _forbidden(ip: str, agent: str, secret_key: str) -> dict[str, str]:
    """What must appear nowhere, by what it is: the address, its hashes, and the visitor ids
    the product stored before (SHA-1 of ip&UA, and keyed with SECRET_KEY under ANONYMIZE_IP)."""
    visitor = f"{ip}&{agent}".encode()
    return {
        "address": ip,
        "SHA-1 of the address": hashlib.sha1(ip.encode(), usedforsecurity=False).hexdigest(),
        "SHA-256 of the address": hashlib.sha256(ip.encode()).hexdigest(),
        "SHA-1 of ip&UA": hashlib.sha1(visitor, usedforsecurity=False).hexdigest(),
        "SHA-256 of ip&UA": hashlib.sha256(visitor).hexdigest(),
        "SHA-256 of ip&UA (40 digits)": hashlib.sha256(visitor).hexdigest()[:40],
        "HMAC-SHA-1 of ip&UA under SECRET_KEY": hmac.new(
            secret_key.encode(), visitor, hashlib.sha1
        ).hexdigest(),
    }


def _stats_when(dep: harness.Deployment, code: str, clicks: int, timeout: float = 90) -> dict:
    """The stats once the roll-up counts `clicks` clicks (and their unique visitors)."""
    deadline = time.monotonic() + timeout
    while True:
        stats = harness.stats(dep, code)
        if stats["total_clicks"] >= clicks or time.monotonic() > deadline:
            return stats
        time.sleep(0.5)


def test_a_deployment_in_none_mode_counts_fifty_people_and_stores_no_address(own_deployment):
    env = {"ANALYTICS_PRIVACY": "none"}
    with own_deployment("embedded", name="privacy-none-embedded", env=env) as dep:
        code = harness.create_link(dep, harness.unique_url("privacy-none"))["code"]
        _fifty_people_twice_each_are_counted_and_no_address_is_stored(dep, code)


def test_a_workspace_in_none_mode_counts_fifty_people_and_stores_no_address(deployment):
    dep = deployment
    slug = "privacy-none-team"
    with dep.api() as api:
        made = api.post(
            dep.url("/api/v1/workspaces/"),
            json={"slug": slug, "name": "Privacy none"},
            timeout=harness.HTTP_TIMEOUT,
        )
        assert made.status_code == 201, made.text[:500]
        chosen = api.patch(
            dep.url(f"/api/v1/workspaces/{slug}/"),
            json={"analytics_privacy": "none"},
            timeout=harness.HTTP_TIMEOUT,
        )
        assert chosen.status_code == 200 and chosen.json()["privacy_mode"] == "none", chosen.text
    link = harness.create_link(dep, harness.unique_url("privacy-none-team"), workspace=slug)
    _fifty_people_twice_each_are_counted_and_no_address_is_stored(dep, link["code"])


def _fifty_people_twice_each_are_counted_and_no_address_is_stored(
    dep: harness.Deployment, code: str
) -> None:
    people = [_person(index) for index in range(PEOPLE)]
    assert len(set(people)) == PEOPLE
    for _ in range(2):
        for ip, agent in people:
            answer = get_fresh(dep.port, f"/{code}", {"X-Forwarded-For": ip, "User-Agent": agent})
            assert answer.status == 302, f"GET /{code} from {ip} → {answer.status}"
    seen = harness.wait_for_visits(dep, code, 2 * PEOPLE, timeout=90)
    assert seen.stored == 2 * PEOPLE, f"stored {seen.stored}: {seen.history}"
    stats = _stats_when(dep, code, 2 * PEOPLE)
    assert (stats["total_clicks"], stats["unique_visitors"], stats["bot_clicks"]) == (
        2 * PEOPLE,
        PEOPLE,
        0,
    ), stats
    assert stats["uniques_exact_within"] == "day"
    # Places were looked up from the full address before it was dropped.
    assert any(entry["name"] not in ("Unknown", "") for entry in stats["countries"]), stats

    dump = _dump(dep)
    assert f"'{code}'" in dump or code in dump, "the dump holds the link: it is the right one"
    found = [
        f"{what} of {ip}"
        for ip, agent in people
        for what, value in _forbidden(ip, agent, dep.env["SECRET_KEY"]).items()
        if value in dump
    ]
    assert not found, f"the database holds: {found[:10]}"
