"""Security round 3, finding 4, against both deployments: a member's webhook receiver hears a
team workspace's links and clicks while they are an editor there, and nothing more once they
are removed, made a viewer, or their account is deleted; the owners see each webhook turned off
with its reason, still pointing where its maker had it (never re-pointed); a removed member's API
key for the workspace stops.

The people and their memberships are set up with `manage.py shell` (the product has no sign-up,
and adding members is another change's subject); leaving, the role change and the account
deletion go through the product's own paths (the members API; deleting the user)."""

from __future__ import annotations

import json
import secrets

import harness
import pytest

PASSWORD = "e2e-departure-pass"  # noqa: S105 (throw-away users of a throw-away deployment)
ROLES = ("owner", "removed", "demoted", "deleted")

# Run by `manage.py shell -c`: the owner and three editors of a team workspace, a DRF token each,
# (by role) and an API key of the removed editor acting for the team workspace alone.
MAKE_TEAM = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from accounts.services import api_key_create
from workspaces.models import Membership
from workspaces.services import workspace_create
names = json.loads({names!r})
users = {{}}
for role, name in names.items():
    users[role] = get_user_model().objects.create_user(name, password={pw!r})
team = workspace_create(user=users["owner"], name={slug!r}, slug={slug!r})
for role in ("removed", "demoted", "deleted"):
    Membership.objects.create(workspace=team, user=users[role], role="editor")
tokens = {{role: Token.objects.create(user=user).key for role, user in users.items()}}
_, key = api_key_create(user=users["removed"], name="team key", workspace=team)
print("E2E-TEAM " + json.dumps({{"tokens": tokens, "key": key}}))
"""


class Receiver(harness.WebhookReceiver):
    """The harness's receiver, which also tells the codes of the links it heard of."""

    def codes(self) -> set[str]:
        """The codes of every link it heard of: created, or clicked."""
        codes = set()
        for body in list(self.bodies):
            if body["event"] == "link.clicked":
                codes |= {click["code"] for click in body["data"]["clicks"]}
            elif "link" in body.get("data", {}):
                codes.add(body["data"]["link"]["code"])
        return codes


@pytest.fixture
def receivers():
    made = {role: Receiver() for role in ROLES}
    yield made
    for receiver in made.values():
        receiver.close()


def test_a_departed_members_receiver_gets_nothing_more(deployment, receivers):
    run = secrets.token_hex(3)
    slug = f"dept-{run}"
    names = {role: f"{role}-{run}" for role in ROLES}
    out = deployment.manage(
        "shell", "-c", MAKE_TEAM.format(names=json.dumps(names), pw=PASSWORD, slug=slug)
    )
    made = json.loads(out.split("E2E-TEAM ", 1)[1].strip().splitlines()[0])
    token = made["tokens"]  # by role

    hooks = {}
    for role in ROLES:
        added = harness.call_as(
            deployment,
            token[role],
            "POST",
            "/api/v1/webhooks/",
            json={
                "url": receivers[role].url,
                "events": ["link.created", "link.clicked"],
                "workspace": slug,
            },
        )
        assert added.status_code == 201, f"{role}: {added.text[:500]}"
        hooks[role] = added.json()["id"]

    def team_link(label: str) -> tuple[str, str]:
        long_url = harness.unique_url(label)
        made = harness.call_as(
            deployment,
            token["owner"],
            "POST",
            "/api/v1/links/",
            json={"long_url": long_url, "workspace": slug},
        )
        assert made.status_code == 201, made.text[:500]
        code = made.json()["code"]
        for index in range(2):
            answer = harness.get_fresh(deployment.port, f"/{code}", harness.visitor_headers(index))
            assert (answer.status, answer.location) == (302, long_url)
        return code, long_url

    # While they are editors, every receiver hears the team's link and its clicks.
    before, _ = team_link("before")
    for role in ROLES:
        harness.wait_until(
            lambda role=role: (
                before in receivers[role].codes()
                and any(b["event"] == "link.clicked" for b in receivers[role].bodies)
            ),
            timeout=90,
            what=f"the {role} editor's receiver to hear the team's link and its clicks",
        )

    # Leaving through the product's own paths.
    members = f"/api/v1/workspaces/{slug}/members/"
    removed = harness.call_as(deployment, token["owner"], "DELETE", f"{members}{names['removed']}/")
    assert removed.status_code == 204, removed.text[:500]
    demoted = harness.call_as(
        deployment,
        token["owner"],
        "PATCH",
        f"{members}{names['demoted']}/",
        json={"role": "viewer"},
    )
    assert demoted.status_code == 200, demoted.text[:500]
    deployment.manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; "
        f"get_user_model().objects.get(username={names['deleted']!r}).delete()",
    )

    # The removed editor's key for the team stops.
    assert harness.call_as(deployment, made["key"], "GET", "/api/v1/links/").status_code == 401

    # A new team link and its clicks: the owner's receiver hears them (so the pipeline ran) …
    after, _ = team_link("after")
    harness.wait_until(
        lambda: (
            after in receivers["owner"].codes()
            and any(
                click["code"] == after
                for body in list(receivers["owner"].bodies)
                if body["event"] == "link.clicked"
                for click in body["data"]["clicks"]
            )
        ),
        timeout=90,
        what="the owner's receiver to hear the new link and its clicks",
    )
    # … and no departed member's receiver hears anything more of it.
    for role in ("removed", "demoted", "deleted"):
        assert after not in receivers[role].codes(), f"the {role} editor still hears the team"

    # The owners see each one turned off, and why, pointing where it did.
    listed = harness.call_as(
        deployment, token["owner"], "GET", "/api/v1/webhooks/", params={"workspace": slug}
    )
    assert listed.status_code == 200, listed.text[:500]
    shown = {hook["id"]: hook for hook in listed.json()}
    expected = {
        "removed": "left the workspace or was removed from it",
        "demoted": "is no longer an owner or editor of the workspace",
        "deleted": "was deleted",
    }
    for role, words in expected.items():
        hook = shown[hooks[role]]
        assert hook["is_active"] is False and words in hook["disabled_reason"], (role, hook)
        assert hook["url"] == receivers[role].url, (role, hook)
    assert shown[hooks["owner"]]["is_active"] is True
    harness.note(
        deployment,
        "member departure",
        "removed / made-viewer / deleted editors' receivers heard nothing after; "
        f"owner's receiver got {len(receivers['owner'].bodies)} POSTs",
    )
