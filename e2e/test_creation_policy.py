"""What may be shortened, checked over HTTP against both deployments (issue #12, rows 1, 3, 13,
15): one link however many times at once one owner shortens a URL, nothing that points back at
the service, no Location header longer than the limit, no host IDNA refuses."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import harness
from harness import HTTP_TIMEOUT

CONCURRENT_CREATES = 64


def _post_link(dep: harness.Deployment, long_url: str) -> tuple[int, dict]:
    with dep.api() as api:
        response = api.post(
            dep.url("/api/v1/links/"), json={"long_url": long_url}, timeout=HTTP_TIMEOUT
        )
    return response.status_code, response.json()


def test_64_concurrent_creates_of_one_url_give_one_link(deployment):
    """Every caller gets the same code: one 201 for the new link, 200 for everyone else."""
    long_url = harness.unique_url("raced")
    with ThreadPoolExecutor(CONCURRENT_CREATES) as pool:
        answers = list(
            pool.map(lambda _: _post_link(deployment, long_url), range(CONCURRENT_CREATES))
        )

    statuses = Counter(status for status, _ in answers)
    assert statuses == {201: 1, 200: CONCURRENT_CREATES - 1}, (
        f"{CONCURRENT_CREATES} concurrent creates of one URL answered {dict(statuses)}; "
        f"bodies of the others: {[body for status, body in answers if status not in (200, 201)]}"
    )
    codes = {body["code"] for _, body in answers}
    assert len(codes) == 1, f"callers were given {len(codes)} different codes: {sorted(codes)}"
    with deployment.api() as api:
        listed = api.get(
            deployment.url("/api/v1/links/"), params={"search": long_url}, timeout=HTTP_TIMEOUT
        ).json()
    assert listed["count"] == 1, f"the owner has {listed['count']} links for one URL: {listed}"


def _refusal(dep: harness.Deployment, long_url: str) -> str:
    status, body = _post_link(dep, long_url)
    assert status == 400 and list(body) == ["long_url"], (
        f"POST {long_url!r} answered {status} {body}, expected 400 on long_url"
    )
    return body["long_url"][0]


def test_links_back_to_the_service_are_refused_in_every_spelling(deployment):
    port = deployment.port
    for long_url in (
        f"http://localhost:{port}/x",
        f"http://[::1]:{port}/x",
        "http://LOCALHOST/x",
        "http://127.0.0.2/x",
        "http://0.0.0.0/x",
    ):
        assert "redirect loop" in _refusal(deployment, long_url), long_url


def test_a_local_address_on_another_port_is_refused_as_local_not_as_a_loop(deployment):
    """Issue #14: another app on this machine (the service's port + 1) is not a short link of
    ours, but visitors cannot reach it either."""
    for long_url, host in (
        (f"http://127.0.0.1:{deployment.port + 1}/x", "127.0.0.1"),
        (f"http://localhost:{deployment.port + 1}/x", "localhost"),
    ):
        assert _refusal(deployment, long_url) == (
            f"This URL points at a local address ({host}) that visitors cannot reach: "
            "on their devices it means their own machine."
        ), long_url


def test_two_links_cannot_point_at_each_other(deployment):
    first = harness.create_link(deployment, harness.unique_url("loop-a"))
    second = harness.create_link(deployment, harness.unique_url("loop-b"))
    other_spelling = first["short_url"].replace(harness.HOST, "localhost")
    assert "redirect loop" in _refusal(deployment, other_spelling)
    with deployment.api() as api:
        changed = api.patch(
            deployment.url(f"/api/v1/links/{first['code']}/"),
            json={"long_url": second["short_url"].replace(harness.HOST, "[::1]")},
            timeout=HTTP_TIMEOUT,
        )
    assert changed.status_code == 400, f"PATCH to a loop answered {changed.status_code}"
    assert "redirect loop" in changed.json()["long_url"][0]
    answer = harness.get_fresh(deployment.port, f"/{first['code']}")
    assert answer.location == first["long_url"], "the refused change was stored"


def test_the_location_limit_counts_encoded_bytes(deployment):
    """2,021 characters of emoji are 24 KB in the Location header: refused when created."""
    message = _refusal(deployment, "https://example.com/" + "😀" * 2001)
    assert "at most 2048 characters" in message and "24,032" in message, message


def test_a_host_idna_refuses_is_refused_with_the_reason(deployment):
    message = _refusal(deployment, "http://☃.net/")
    assert "☃.net" in message and "U+2603" in message, message
