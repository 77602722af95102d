"""Joining a workspace is by invitation, and a squatted slug cannot capture a new user's links
(security round 3, finding 5), over HTTP against both deployments.

The audit's chain: an attacker makes a team workspace with the slug a future account's name
will give ("newuser"), the account is made, the attacker adds it (as owner) with the members
endpoint, and the new user's `"workspace": "newuser"` link lands in the attacker's workspace.
Here the add is an invitation that makes no member until accepted, the attacker's answer is the
same as for an address that is nobody's, the new user's own name is their own workspace, and
the attacker sees none of their links. A second case goes through the pages: an owner invites
on the members page, the invitee sees it on My links and the Workspaces page and accepts it
there; a withdrawn invitation cannot be accepted.

The users and their DRF tokens are made with `manage.py shell` (the product has no sign-up);
everything else goes through the API and the pages."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass

import harness
from harness import HTTP_TIMEOUT

PASSWORD = "e2e-invitations-pass"  # noqa: S105 (throw-away users of a throw-away deployment)

MAKE_USERS = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
tokens = {{}}
for name in json.loads({names!r}):
    user = get_user_model().objects.create_user(name, email=name + "@example.com", password={pw!r})
    tokens[name] = Token.objects.create(user=user).key
print("E2E-USERS " + json.dumps(tokens))
"""


def _make_users(dep: harness.Deployment, *names: str) -> dict[str, str]:
    """The accounts, made now (as staff would); {username: DRF token}."""
    out = dep.manage("shell", "-c", MAKE_USERS.format(names=json.dumps(names), pw=PASSWORD))
    return json.loads(out.split("E2E-USERS ", 1)[1].strip().splitlines()[0])


@dataclass
class Caller:
    dep: harness.Deployment
    token: str

    def __call__(self, method: str, path: str, **kwargs):
        return harness.call_as(self.dep, self.token, method, path, **kwargs)


def _rows(response) -> list[dict]:
    assert response.status_code == 200, f"{response.status_code}: {response.text[:500]}"
    body = response.json()
    return body["results"] if isinstance(body, dict) else body


def test_a_squatted_slug_and_an_unasked_add_capture_nothing(deployment):
    run = secrets.token_hex(3)
    attacker_name, newuser_name = f"attacker-{run}", f"newuser-{run}"
    attacker = Caller(deployment, _make_users(deployment, attacker_name)[attacker_name])

    # The squat: a team workspace named and slugged as the account to come.
    squat = attacker(
        "POST", "/api/v1/workspaces/", json={"name": newuser_name, "slug": newuser_name}
    )
    assert squat.status_code == 201, squat.text[:500]

    newuser = Caller(deployment, _make_users(deployment, newuser_name)[newuser_name])
    mine = _rows(newuser("GET", "/api/v1/workspaces/"))
    [own_slug] = [w["slug"] for w in mine if w["personal"]]

    # The add, as owner, of the new account and of an address that is nobody's.
    members = f"/api/v1/workspaces/{newuser_name}/members/"
    real = attacker("POST", members, json={"user": f"{newuser_name}@example.com", "role": "owner"})
    ghost = attacker("POST", members, json={"user": f"ghost-{run}@example.com", "role": "owner"})

    # The new user's "workspace": "<their name>" is their own workspace, which the attacker
    # cannot read.
    made = newuser(
        "POST",
        "/api/v1/links/",
        json={"long_url": harness.unique_url("own"), "workspace": newuser_name},
    )
    assert made.status_code == 201, made.text[:500]
    assert made.json()["workspace"] == own_slug, "the link landed in the squatter's workspace"
    code = made.json()["code"]
    assert attacker("GET", f"/api/v1/links/{code}/").status_code == 404
    squatted = attacker("GET", "/api/v1/links/", params={"workspace": newuser_name})
    assert squatted.status_code == 200 and squatted.json()["count"] == 0, squatted.text[:500]

    # The add made an invitation, no member, answered as for an address that is nobody's.
    assert [m["user"] for m in _rows(attacker("GET", members))] == [attacker_name]
    for answer in (real, ghost):
        assert answer.status_code == 202, answer.text[:500]
        assert "No user" not in answer.text
    assert sorted(real.json()) == sorted(ghost.json())
    assert (real.json()["status"], ghost.json()["status"]) == ("pending", "pending")
    assert newuser_name not in real.text.replace(f"{newuser_name}@example.com", "")
    # Their own workspace's slug is none a username gives.
    assert own_slug == f"{newuser_name}--2"

    # The new user sees who invited them to what, and declines; the attacker cannot tell.
    [invitation] = _rows(newuser("GET", "/api/v1/invitations/"))
    assert invitation["workspace"]["slug"] == newuser_name
    assert (invitation["invited_by"], invitation["role"]) == (attacker_name, "owner")
    declined = newuser("POST", f"/api/v1/invitations/{invitation['id']}/decline/")
    assert declined.status_code == 204, declined.text[:500]
    assert _rows(newuser("GET", "/api/v1/invitations/")) == []
    waiting = _rows(attacker("GET", f"/api/v1/workspaces/{newuser_name}/invitations/"))
    assert {(w["user"], w["status"]) for w in waiting} == {
        (f"{newuser_name}@example.com", "pending"),
        (f"ghost-{run}@example.com", "pending"),
    }
    assert [m["user"] for m in _rows(attacker("GET", members))] == [attacker_name]
    assert [w["slug"] for w in _rows(newuser("GET", "/api/v1/workspaces/"))] == [own_slug]

    # A team workspace can no longer take an existing user's name.
    again = attacker("POST", "/api/v1/workspaces/", json={"name": "x", "slug": attacker_name})
    assert again.status_code == 400 and "slug" in again.json(), again.text[:500]


def test_an_invitation_is_accepted_on_the_pages_and_a_withdrawn_one_cannot_be(deployment):
    run = secrets.token_hex(3)
    names = (f"owner-{run}", f"guest-{run}", f"late-{run}")
    tokens = _make_users(deployment, *names)
    owner_name, guest_name, late_name = names
    owner = Caller(deployment, tokens[owner_name])
    slug = f"crew-{run}"
    assert (
        owner("POST", "/api/v1/workspaces/", json={"name": "Crew", "slug": slug}).status_code == 201
    )

    # The owner invites on the members page.
    browser = harness.login(deployment, owner_name, PASSWORD)
    path = f"/workspaces/{slug}/"
    page = browser.get(deployment.url(path), timeout=HTTP_TIMEOUT)
    assert page.status_code == 200 and "Invite someone" in page.text
    sent = harness.post_form(
        deployment,
        browser,
        path,
        page.text,
        {"action": "add", "username": f"{guest_name}@example.com", "role": "editor"},
    )
    assert sent.status_code == 302, sent.text[:500]
    page = browser.get(deployment.url(path), timeout=HTTP_TIMEOUT)
    assert f"Invited {guest_name}@example.com as editor" in page.text
    assert f'data-invitation="{guest_name}@example.com"' in page.text
    assert f'data-member="{guest_name}"' not in page.text

    # The guest sees it on My links and the Workspaces page, and accepts it there.
    guest = harness.login(deployment, guest_name, PASSWORD)
    dashboard = guest.get(deployment.url("/dashboard/"), timeout=HTTP_TIMEOUT)
    assert "An invitation to a workspace waits" in dashboard.text
    listing = guest.get(deployment.url("/workspaces/"), timeout=HTTP_TIMEOUT)
    assert f'data-invitation="{slug}"' in listing.text
    [invitation] = _rows(Caller(deployment, tokens[guest_name])("GET", "/api/v1/invitations/"))
    accepted = harness.post_form(
        deployment,
        guest,
        "/workspaces/",
        listing.text,
        {"action": "accept", "invitation": str(invitation["id"])},
    )
    assert accepted.status_code == 302 and accepted.headers["Location"].endswith(path)
    members = _rows(owner("GET", f"/api/v1/workspaces/{slug}/members/"))
    assert {m["user"]: m["role"] for m in members} == {owner_name: "owner", guest_name: "editor"}
    assert _rows(owner("GET", f"/api/v1/workspaces/{slug}/invitations/")) == []

    # A withdrawn invitation cannot be accepted.
    late = Caller(deployment, tokens[late_name])
    made = owner(
        "POST",
        f"/api/v1/workspaces/{slug}/invitations/",
        json={"user": late_name, "role": "viewer"},
    )
    assert made.status_code == 202, made.text[:500]
    assert [i["id"] for i in _rows(late("GET", "/api/v1/invitations/"))] == [made.json()["id"]]
    withdrawn = owner("DELETE", f"/api/v1/workspaces/{slug}/invitations/{made.json()['id']}/")
    assert withdrawn.status_code == 204, withdrawn.text[:500]
    assert _rows(late("GET", "/api/v1/invitations/")) == []
    refused = late("POST", f"/api/v1/invitations/{made.json()['id']}/accept/")
    assert refused.status_code == 404, refused.text[:500]
    assert late("GET", f"/api/v1/workspaces/{slug}/").status_code == 404
