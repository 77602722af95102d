"""Bulk edit (#28) over HTTP against both deployments: `demo` makes a few hundred links with the
bulk API, another user makes some in their personal workspace and some in a team where `demo`
is only a viewer; one `PATCH /api/v1/links/bulk/` naming all of them tags and archives demo's
links and refuses each of the others on its own (not found; a viewer's); a second revokes half
of demo's, and the redirect, from fresh connections (every server worker), answers those 410 at
once, even after each had been cached by a click, while the rest still redirect.

The other user and the team are made with `manage.py shell` (the product has no sign-up)."""

from __future__ import annotations

import json
import secrets

import harness
from harness import HTTP_TIMEOUT, get_fresh, visitor_headers

OWN = 300  # demo's links in the call
THEIRS = 20  # the other user's personal links, and as many in the team demo only views

MAKE_RIVAL = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from workspaces.models import Role
from workspaces.services import member_add, workspace_create
rival = get_user_model().objects.create_user({name!r})
team = workspace_create(user=rival, name={name!r} + " team", slug={name!r} + "-team")
member_add(by=rival, workspace=team, username="demo", role=Role.VIEWER)
print("E2E-RIVAL " + json.dumps({{"token": Token.objects.create(user=rival).key,
                                  "team": team.slug}}))
"""


def _bulk_create(dep, token: str | None, urls: list[str], workspace: str = "") -> list[str]:
    body = {"items": [{"long_url": url} for url in urls]}
    if workspace:
        body["workspace"] = workspace
    if token is None:
        with dep.api() as api:
            response = api.post(dep.url("/api/v1/links/bulk/"), json=body, timeout=HTTP_TIMEOUT)
    else:
        response = harness.call_as(dep, token, "POST", "/api/v1/links/bulk/", json=body)
    assert response.status_code == 200, response.text[:500]
    made = response.json()
    assert made["created"] == len(urls), {k: made[k] for k in ("created", "existing", "failed")}
    return [result["link"]["code"] for result in made["results"]]


def _patch(dep, codes: list[str], changes: dict) -> dict:
    with dep.api() as api:
        response = api.patch(
            dep.url("/api/v1/links/bulk/"),
            json={"codes": codes, "set": changes},
            timeout=HTTP_TIMEOUT,
        )
    assert response.status_code == 200, response.text[:500]
    return response.json()


def test_a_bulk_patch_changes_demos_links_and_refuses_the_others_per_code(deployment):
    run = secrets.token_hex(3)
    out = deployment.manage("shell", "-c", MAKE_RIVAL.format(name=f"rival-{run}"))
    rival = json.loads(out.split("E2E-RIVAL ", 1)[1].strip().splitlines()[0])
    urls = [harness.unique_url(f"bulk-edit-{n}") for n in range(OWN)]
    own = _bulk_create(deployment, None, urls)
    theirs = _bulk_create(
        deployment, rival["token"], [harness.unique_url("rival") for _ in range(THEIRS)]
    )
    viewed = _bulk_create(
        deployment,
        rival["token"],
        [harness.unique_url("rival-team") for _ in range(THEIRS)],
        workspace=rival["team"],
    )
    # Every link redirects, and the first ones are cached by a click before the change.
    for index, code in enumerate(own[:40]):
        answer = get_fresh(deployment.port, f"/{code}", visitor_headers(index))
        assert (answer.status, answer.location) == (302, urls[index]), (code, answer)

    tag = f"bulk-{run}"
    body = _patch(deployment, [*own, *theirs, *viewed], {"add_tags": [tag], "archived": True})

    assert (body["changed"], body["unchanged"], body["refused"]) == (OWN, 0, 2 * THEIRS), {
        k: body[k] for k in ("changed", "unchanged", "refused")
    }
    results = {result["code"]: result for result in body["results"]}
    assert [result["code"] for result in body["results"]] == [*own, *theirs, *viewed]
    for code in theirs:
        assert results[code]["errors"] == {"code": ["No link with this code."]}, results[code]
    for code in viewed:
        assert results[code]["outcome"] == "refused"
        assert "Viewers of the workspace" in results[code]["errors"]["code"][0], results[code]
    listed = harness.api_get(deployment, "/api/v1/links/", tag=tag, archived="true", page_size=500)
    assert {item["code"] for item in listed["results"]} == set(own)
    assert all(item["archived"] for item in listed["results"])
    shown = harness.call_as(deployment, rival["token"], "GET", f"/api/v1/links/{viewed[0]}/")
    assert shown.json()["archived"] is False and shown.json()["tags"] == []

    # Revoke half of them (the cached ones among them) in one call: 410 from every worker.
    revoked, kept = own[: OWN // 2], own[OWN // 2 :]
    body = _patch(deployment, [*revoked, *viewed], {"revoked": True})
    assert (body["changed"], body["refused"]) == (len(revoked), THEIRS), body["results"][:3]
    for index, code in enumerate(revoked[:40] + revoked[-10:]):
        answer = get_fresh(deployment.port, f"/{code}", visitor_headers(index))
        assert answer.status == 410, (code, answer.status, answer.location)
    for index, code in enumerate(kept[:20]):
        answer = get_fresh(deployment.port, f"/{code}", visitor_headers(index))
        assert (answer.status, answer.location) == (302, urls[OWN // 2 + index]), (code, answer)
    for index, code in enumerate(viewed[:5]):
        answer = get_fresh(deployment.port, f"/{code}", visitor_headers(index))
        assert answer.status == 302, (code, answer.status)

    # Over 1,000 codes: the whole call is refused, naming the field.
    with deployment.api() as api:
        too_many = api.patch(
            deployment.url("/api/v1/links/bulk/"),
            json={"codes": [*own] * 4, "set": {"archived": False}},
            timeout=HTTP_TIMEOUT,
        )
    assert too_many.status_code == 400 and "codes" in too_many.json(), too_many.text[:300]
