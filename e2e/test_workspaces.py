"""Workspaces (#16) over HTTP against both deployments: an owner makes a team workspace with the
API and adds an editor and a viewer; the editor's link in it redirects from every worker process;
members see it, the viewer only reads (403 on every write), a non-member is told nothing (404 on
the API, the stats API and the dashboard's stats page), and an API key acting for its user's
personal workspace does not see the team's link.

The users, their DRF tokens and the personal key are made with `manage.py shell` (the product
has no sign-up); everything else goes through the API and the pages, as a team would."""

from __future__ import annotations

import json
import secrets
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import harness
import pytest
from harness import HTTP_TIMEOUT, get_fresh, visitor_headers

PASSWORD = "e2e-workspaces-pass"  # noqa: S105 (throw-away users of a throw-away deployment)
REPEATS = 20  # fresh connections, eight at a time, so that every worker process answers

# Run by `manage.py shell -c`: the people of the case, a DRF token each (acting in every
# workspace of its user) and, for the owner, an API key acting for her personal workspace alone.
MAKE_PEOPLE = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from accounts.services import api_key_create
names = json.loads({names!r})
tokens = {{}}
for name in names.values():
    user = get_user_model().objects.create_user(name, email=name + "@example.com", password={pw!r})
    tokens[name] = Token.objects.create(user=user).key
owner = get_user_model().objects.get(username=names["owner"])
_, personal_key = api_key_create(user=owner, name="personal only")
print("E2E-PEOPLE " + json.dumps({{"tokens": tokens, "personal_key": personal_key}}))
"""


@dataclass
class Team:
    slug: str
    users: dict[str, str]  # role in the case → username
    tokens: dict[str, str]  # username → DRF token
    personal_key: str  # the owner's key, acting for her personal workspace

    def token(self, who: str) -> str:
        return self.tokens[self.users[who]]


def _call(dep: harness.Deployment, token: str, method: str, path: str, **kwargs):
    with dep.session() as sess:
        sess.headers["Authorization"] = f"Token {token}"
        return sess.request(method, dep.url(path), timeout=HTTP_TIMEOUT, **kwargs)


def _as(dep: harness.Deployment, team: Team, who: str, method: str, path: str, **kwargs):
    return _call(dep, team.token(who), method, path, **kwargs)


def _accept(dep: harness.Deployment, team: Team, who: str) -> None:
    """`who` accepts their invitation to the team workspace: adding someone invites them
    (e2e/test_invitations.py)."""
    waiting = _as(dep, team, who, "GET", "/api/v1/invitations/")
    assert waiting.status_code == 200, waiting.text[:500]
    [invitation] = [i for i in waiting.json() if i["workspace"]["slug"] == team.slug]
    accepted = _as(dep, team, who, "POST", f"/api/v1/invitations/{invitation['id']}/accept/")
    assert accepted.status_code == 200, accepted.text[:500]


@pytest.fixture(scope="module")
def team(deployment) -> Team:
    """Four people (owner, editor, viewer, outsider) and a team workspace the owner made with
    the API, the editor and viewer added with the members endpoint."""
    run = secrets.token_hex(3)
    users = {role: f"{role}-{run}" for role in ("owner", "editor", "viewer", "outsider")}
    out = deployment.manage("shell", "-c", MAKE_PEOPLE.format(names=json.dumps(users), pw=PASSWORD))
    made = json.loads(out.split("E2E-PEOPLE ", 1)[1].strip().splitlines()[0])
    team = Team(
        slug=f"growth-{run}",
        users=users,
        tokens=made["tokens"],
        personal_key=made["personal_key"],
    )
    created = _as(
        deployment,
        team,
        "owner",
        "POST",
        "/api/v1/workspaces/",
        json={"name": f"Growth {run}", "slug": team.slug},
    )
    assert created.status_code == 201, created.text[:500]
    assert created.json()["slug"] == team.slug
    assert created.json()["role"] == "owner"
    for who, role in (("editor", "editor"), ("viewer", "viewer")):
        added = _as(
            deployment,
            team,
            "owner",
            "POST",
            f"/api/v1/workspaces/{team.slug}/members/",
            json={"user": users[who], "role": role},
        )
        assert added.status_code == 202, f"inviting the {who} → {added.status_code}: {added.text}"
        assert added.json()["role"] == role
        _accept(deployment, team, who)
    return team


@pytest.fixture(scope="module")
def team_link(deployment, team) -> dict:
    """A link the editor made in the team workspace."""
    created = _as(
        deployment,
        team,
        "editor",
        "POST",
        "/api/v1/links/",
        json={"long_url": harness.unique_url("team"), "workspace": team.slug},
    )
    assert created.status_code == 201, created.text[:500]
    return created.json()


def test_an_owner_makes_a_team_workspace_and_manages_its_members(deployment, team):
    listed = _as(deployment, team, "owner", "GET", "/api/v1/workspaces/")
    assert listed.status_code == 200, listed.text[:500]
    body = listed.json()
    rows = body["results"] if isinstance(body, dict) else body
    mine = {row["slug"]: row for row in rows}
    assert mine[team.slug]["role"] == "owner"
    assert mine[team.slug]["members"] == 3
    assert [row["personal"] for row in rows].count(True) == 1, rows

    members = _as(deployment, team, "owner", "GET", f"/api/v1/workspaces/{team.slug}/members/")
    assert members.status_code == 200, members.text[:500]
    body = members.json()
    rows = body["results"] if isinstance(body, dict) else body
    assert {row["user"]: row["role"] for row in rows} == {
        team.users["owner"]: "owner",
        team.users["editor"]: "editor",
        team.users["viewer"]: "viewer",
    }

    # The outsider joins, is promoted, then removed; the workspace is back as it was.
    outsider = team.users["outsider"]
    member_path = f"/api/v1/workspaces/{team.slug}/members/{outsider}/"
    added = _as(
        deployment,
        team,
        "owner",
        "POST",
        f"/api/v1/workspaces/{team.slug}/members/",
        json={"user": f"{outsider}@example.com", "role": "viewer"},
    )
    assert added.status_code == 202, added.text[:500]
    _accept(deployment, team, "outsider")
    changed = _as(deployment, team, "owner", "PATCH", member_path, json={"role": "editor"})
    assert (changed.status_code, changed.json().get("role")) == (200, "editor"), changed.text
    removed = _as(deployment, team, "owner", "DELETE", member_path)
    assert removed.status_code == 204, removed.text[:500]

    # Only owners manage members; the last owner stays one.
    refused = _as(
        deployment,
        team,
        "editor",
        "POST",
        f"/api/v1/workspaces/{team.slug}/members/",
        json={"user": outsider, "role": "editor"},
    )
    assert refused.status_code == 403, refused.text[:500]
    last = _as(
        deployment,
        team,
        "owner",
        "PATCH",
        f"/api/v1/workspaces/{team.slug}/members/{team.users['owner']}/",
        json={"role": "viewer"},
    )
    assert last.status_code == 400, last.text[:500]

    # A non-member cannot tell the workspace from one that does not exist.
    for path in (f"/api/v1/workspaces/{team.slug}/", f"/api/v1/workspaces/{team.slug}/members/"):
        hidden = _as(deployment, team, "outsider", "GET", path)
        assert hidden.status_code == 404, f"{path} → {hidden.status_code}: {hidden.text[:300]}"


def test_an_editors_team_link_redirects_from_every_worker_and_every_member_sees_it(
    deployment, team, team_link
):
    code, long_url = team_link["code"], team_link["long_url"]
    assert team_link["workspace"] == team.slug
    with ThreadPoolExecutor(8) as pool:
        answers = list(
            pool.map(
                lambda i: get_fresh(deployment.port, f"/{code}", visitor_headers(i)),
                range(REPEATS),
            )
        )
    seen = Counter((a.status, a.location) for a in answers)
    assert seen == {(302, long_url): REPEATS}, dict(seen)

    for who in ("owner", "editor", "viewer"):
        got = _as(deployment, team, who, "GET", f"/api/v1/links/{code}/")
        assert got.status_code == 200, f"{who}: {got.status_code} {got.text[:300]}"
        assert (got.json()["long_url"], got.json()["workspace"]) == (long_url, team.slug)
        stats = _as(deployment, team, who, "GET", f"/api/v1/links/{code}/stats/")
        assert stats.status_code == 200, f"{who}'s stats: {stats.status_code} {stats.text[:300]}"

    listed = _as(
        deployment, team, "viewer", "GET", "/api/v1/links/", params={"workspace": team.slug}
    )
    assert listed.status_code == 200, listed.text[:500]
    assert [row["code"] for row in listed.json()["results"]] == [code]
    # The viewer's own list (every workspace of hers) holds it too.
    everything = _as(deployment, team, "viewer", "GET", "/api/v1/links/")
    assert code in [row["code"] for row in everything.json()["results"]]

    # The owner changes the editor's link: the new destination is served by every worker.
    moved = harness.unique_url("team-moved")
    changed = _as(
        deployment, team, "owner", "PATCH", f"/api/v1/links/{code}/", json={"long_url": moved}
    )
    assert changed.status_code == 200, changed.text[:500]
    with ThreadPoolExecutor(8) as pool:
        answers = list(
            pool.map(
                lambda i: get_fresh(deployment.port, f"/{code}", visitor_headers(i)),
                range(REPEATS),
            )
        )
    seen = Counter((a.status, a.location) for a in answers)
    assert seen == {(302, moved): REPEATS}, dict(seen)


def test_a_viewer_reads_but_every_write_is_refused(deployment, team, team_link):
    code = team_link["code"]
    before = _as(deployment, team, "viewer", "GET", f"/api/v1/links/{code}/").json()

    patched = _as(
        deployment,
        team,
        "viewer",
        "PATCH",
        f"/api/v1/links/{code}/",
        json={"title": "viewer was here"},
    )
    assert patched.status_code == 403, patched.text[:500]
    revoked = _as(deployment, team, "viewer", "DELETE", f"/api/v1/links/{code}/")
    assert revoked.status_code == 403, revoked.text[:500]
    created = _as(
        deployment,
        team,
        "viewer",
        "POST",
        "/api/v1/links/",
        json={"long_url": harness.unique_url("viewer"), "workspace": team.slug},
    )
    assert created.status_code == 403, created.text[:500]

    after = _as(deployment, team, "viewer", "GET", f"/api/v1/links/{code}/").json()
    assert (after["title"], after["is_active"]) == (before["title"], True)
    answer = get_fresh(deployment.port, f"/{code}", visitor_headers(0))
    assert answer.status == 302

    # Her own personal workspace is hers to write in.
    own = _as(
        deployment,
        team,
        "viewer",
        "POST",
        "/api/v1/links/",
        json={"long_url": harness.unique_url("own")},
    )
    assert own.status_code == 201, own.text[:500]
    assert own.json()["workspace"] != team.slug


def test_a_non_member_is_told_nothing(deployment, team, team_link):
    code = team_link["code"]
    for method, path, kwargs in (
        ("GET", f"/api/v1/links/{code}/", {}),
        ("GET", f"/api/v1/links/{code}/stats/", {}),
        ("PATCH", f"/api/v1/links/{code}/", {"json": {"title": "mine"}}),
        ("DELETE", f"/api/v1/links/{code}/", {}),
        ("GET", "/api/v1/links/", {"params": {"workspace": team.slug}}),
    ):
        answer = _as(deployment, team, "outsider", method, path, **kwargs)
        assert answer.status_code == 404, f"{method} {path} → {answer.status_code}: {answer.text}"
    listed = _as(deployment, team, "outsider", "GET", "/api/v1/links/")
    assert code not in [row["code"] for row in listed.json()["results"]]
    # Creating in a workspace one is not in: the same answer as for a slug that does not exist.
    for slug in (team.slug, f"no-such-{secrets.token_hex(3)}"):
        created = _as(
            deployment,
            team,
            "outsider",
            "POST",
            "/api/v1/links/",
            json={"long_url": harness.unique_url("outsider"), "workspace": slug},
        )
        assert created.status_code == 400, created.text[:500]
        assert "workspace" in created.json()

    browser = harness.login(deployment, team.users["outsider"], PASSWORD)
    page = browser.get(deployment.url(f"/dashboard/links/{code}/"), timeout=HTTP_TIMEOUT)
    assert page.status_code == 404, f"the dashboard's stats page → {page.status_code}"
    # A member's browser gets the page (the rule is the same one).
    member = harness.login(deployment, team.users["viewer"], PASSWORD)
    page = member.get(deployment.url(f"/dashboard/links/{code}/"), timeout=HTTP_TIMEOUT)
    assert page.status_code == 200, f"the viewer's stats page → {page.status_code}"


def test_a_key_acting_for_the_personal_workspace_does_not_see_the_team_link(
    deployment, team, team_link
):
    code = team_link["code"]
    key = team.personal_key
    # The owner's token acts in all her workspaces: it sees the link.
    assert _as(deployment, team, "owner", "GET", f"/api/v1/links/{code}/").status_code == 200
    hidden = _call(deployment, key, "GET", f"/api/v1/links/{code}/")
    assert hidden.status_code == 404, hidden.text[:500]
    listed = _call(deployment, key, "GET", "/api/v1/links/")
    assert listed.status_code == 200, listed.text[:500]
    assert code not in [row["code"] for row in listed.json()["results"]]
    narrowed = _call(deployment, key, "GET", "/api/v1/links/", params={"workspace": team.slug})
    assert narrowed.status_code == 404, narrowed.text[:500]
    # What it makes lands in the personal workspace; it may not name the team.
    made = _call(
        deployment, key, "POST", "/api/v1/links/", json={"long_url": harness.unique_url("key")}
    )
    assert made.status_code == 201, made.text[:500]
    assert made.json()["workspace"] != team.slug
    refused = _call(
        deployment,
        key,
        "POST",
        "/api/v1/links/",
        json={"long_url": harness.unique_url("key-team"), "workspace": team.slug},
    )
    assert refused.status_code == 400, refused.text[:500]


def test_a_domain_kept_for_the_team_takes_its_links_only(deployment, team):
    host = f"team-{deployment.mode}-{secrets.token_hex(3)}.e2e.test"
    out = deployment.manage("domains", "add", host, "--workspace", team.slug)
    assert f"Added {host}" in out, out
    assert f"{host}: 0 link(s)" in deployment.manage("domains", "list")

    long_url = harness.unique_url("kept-domain")
    alias = f"kept-{secrets.token_hex(4)}"
    created = _as(
        deployment,
        team,
        "editor",
        "POST",
        "/api/v1/links/",
        json={"long_url": long_url, "alias": alias, "domain": host, "workspace": team.slug},
    )
    assert created.status_code == 201, created.text[:500]
    assert created.json()["workspace"] == team.slug
    # The same editor's personal link, and the outsider's, may not use it.
    for who in ("editor", "outsider"):
        refused = _as(
            deployment,
            team,
            who,
            "POST",
            "/api/v1/links/",
            json={"long_url": harness.unique_url("kept-refused"), "domain": host},
        )
        assert refused.status_code == 400, f"{who}: {refused.status_code} {refused.text[:300]}"
        assert "kept for another workspace" in refused.json()["domain"][0]

    # The team's link is served on its domain by every worker.
    with ThreadPoolExecutor(8) as pool:
        answers = list(
            pool.map(
                lambda i: get_fresh(
                    deployment.port, f"/{alias}", {**visitor_headers(i), "Host": host}
                ),
                range(REPEATS),
            )
        )
    seen = Counter((a.status, a.location) for a in answers)
    assert seen == {(302, long_url): REPEATS}, dict(seen)
