"""Joining a workspace is by invitation (security round 3, finding 5): an owner's "add" makes an
invitation the invitee sees and accepts or declines, and only acceptance makes a membership;
the inviter is told the same whether or not the address is someone's account; invitations
expire and can be withdrawn. And a personal workspace is never confusable with another's: a
team workspace cannot take the slug of a user's name, and a `workspace` that is the caller's own
name is their personal workspace, in the native API and the Shlink, YOURLS and Bitly layers.

Real database, the API and the pages through Django's test clients, no mocks."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.services import api_key_create
from links.models import UrlLink
from links.tests.factories import UserFactory
from workspaces.models import Membership, Role, Workspace
from workspaces.selectors import personal_workspace_of
from workspaces.services import member_set_role, workspace_create
from workspaces.tests.helpers import key_of, native, token_of

pytestmark = pytest.mark.django_db

MEMBERS = "/api/v1/workspaces/acme/members/"
INVITATIONS = "/api/v1/workspaces/acme/invitations/"
MINE = "/api/v1/invitations/"


def _as(user):
    return native(token_of(user))


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def owner():
    return UserFactory(username="olga")


@pytest.fixture
def acme(owner):
    return workspace_create(user=owner, name="Acme", slug="acme")


@pytest.fixture
def invitee():
    return UserFactory(username="newbie", email="newbie@example.com")


def _invite(owner, user: str, role: str = "editor", path: str = MEMBERS):
    return _as(owner).post(path, {"user": user, "role": role}, format="json")


def _waiting(user) -> list[dict]:
    response = _as(user).get(MINE)
    assert response.status_code == 200, response.content
    return response.json()


def _is_member(user, workspace) -> bool:
    return Membership.objects.filter(workspace=workspace, user=user).exists()


# --- Inviting: no membership, nothing told about the address -----------------------------------


def test_adding_someone_even_as_owner_makes_an_invitation_not_a_member(owner, acme, invitee):
    answer = _invite(owner, "newbie@example.com", role="owner")
    assert answer.status_code == 202, answer.content
    body = answer.json()
    assert (body["user"], body["role"], body["status"]) == (
        "newbie@example.com",
        "owner",
        "pending",
    )
    assert "newbie" not in answer.text.replace("newbie@example.com", "")  # no username echoed
    assert not _is_member(invitee, acme)
    members = _as(owner).get(MEMBERS).json()
    assert [m["user"] for m in members] == ["olga"]
    # Until they accept, the workspace is closed to them as to anyone.
    create = _as(invitee).post(
        "/api/v1/links/",
        {"long_url": "https://example.com/x", "workspace": "acme"},
        format="json",
    )
    assert create.status_code == 400
    assert _as(invitee).get("/api/v1/workspaces/acme/").status_code == 404


def test_the_inviters_answer_is_the_same_for_an_account_and_for_nobody(owner, acme, invitee):
    def shape(response) -> tuple:
        body = response.json()
        return response.status_code, sorted(body), body["role"], body["status"]

    real_email = _invite(owner, "newbie@example.com")
    real_name = _invite(owner, "newbie")
    nobody_email = _invite(owner, "nobody@example.com")
    nobody_name = _invite(owner, "nobody")
    assert shape(real_email) == shape(real_name) == shape(nobody_email) == shape(nobody_name)
    assert shape(real_email)[0] == 202
    for response in (nobody_email, nobody_name):
        assert "No user" not in response.text
    listed = _as(owner).get(INVITATIONS)
    assert listed.status_code == 200
    rows = {row["user"]: row for row in listed.json()}
    assert set(rows) == {"newbie@example.com", "newbie", "nobody@example.com", "nobody"}
    assert {(row["status"], row["role"], row["invited_by"]) for row in rows.values()} == {
        ("pending", "editor", "olga")
    }
    assert "newbie" not in rows["newbie@example.com"].values()


def test_staff_who_read_accounts_are_told_an_address_is_nobodys(acme, staff_user):
    answer = _invite(staff_user, "nobody@example.com")
    assert answer.status_code == 400
    assert answer.json() == {"user": ["No account has this username or email."]}


def test_staff_without_the_accounts_permission_are_told_nothing(acme):
    manager = UserFactory(username="manager", is_staff=True)
    manager.user_permissions.add(Permission.objects.get(codename="change_workspace"))
    assert _invite(manager, "nobody@example.com").status_code == 202


def test_only_owners_invite_and_only_roles_they_may_grant(owner, acme, invitee):
    editor, viewer = UserFactory(username="ed"), UserFactory(username="vi")
    for user, role in ((editor, "editor"), (viewer, "viewer")):
        assert _invite(owner, user.username, role=role).status_code == 202
        invitation = _waiting(user)[0]
        assert _as(user).post(f"{MINE}{invitation['id']}/accept/").status_code == 200
    for member in (editor, viewer):
        assert _invite(member, "newbie").status_code == 403
        assert _as(member).get(INVITATIONS).status_code == 403
    assert _invite(UserFactory(username="out"), "newbie").status_code == 404
    bad_role = _invite(owner, "newbie", role="boss")
    assert bad_role.status_code == 400 and "role" in bad_role.json()
    member = _invite(owner, "ed")
    assert member.status_code == 400 and member.json() == {"user": ["ed is already a member."]}


def test_an_email_of_a_member_is_accepted_silently_and_offers_them_nothing(owner, acme):
    ed = UserFactory(username="ed", email="ed@example.com")
    _invite(owner, "ed")
    _as(ed).post(f"{MINE}{_waiting(ed)[0]['id']}/accept/")
    again = _invite(owner, "ed@example.com", role="owner")
    assert again.status_code == 202
    assert _waiting(ed) == []


def test_inviting_an_address_again_renews_its_one_invitation(owner, acme, invitee):
    first = _invite(owner, "newbie", role="viewer").json()
    second = _invite(owner, "NEWBIE", role="editor").json()
    assert second["id"] == first["id"] and second["role"] == "editor"
    assert [i["role"] for i in _waiting(invitee)] == ["editor"]


def test_a_workspace_has_a_bounded_number_of_waiting_invitations(owner, acme, settings):
    settings.WORKSPACE_INVITATIONS_OPEN_MAX = 2
    assert _invite(owner, "a@example.com").status_code == 202
    assert _invite(owner, "b@example.com").status_code == 202
    refused = _invite(owner, "c@example.com")
    assert refused.status_code == 400 and "waiting" in refused.json()["user"][0]
    assert _invite(owner, "a@example.com", role="viewer").status_code == 202  # a renewal


# --- The invitee: sees, accepts or declines ---------------------------------------------------


def test_the_invitee_sees_the_invitation_and_joins_only_by_accepting(owner, acme, invitee):
    _invite(owner, "newbie@example.com", role="viewer")
    [invitation] = _waiting(invitee)
    assert invitation["workspace"] == {"slug": "acme", "name": "Acme", "personal": False}
    assert (invitation["role"], invitation["invited_by"]) == ("viewer", "olga")
    assert not _is_member(invitee, acme)
    # Nobody else can answer it.
    stranger = UserFactory(username="stranger")
    assert _as(stranger).post(f"{MINE}{invitation['id']}/accept/").status_code == 404
    assert _as(owner).post(f"{MINE}{invitation['id']}/accept/").status_code == 404
    assert not _is_member(stranger, acme)

    accepted = _as(invitee).post(f"{MINE}{invitation['id']}/accept/")
    assert accepted.status_code == 200, accepted.content
    assert accepted.json()["workspace"] == "acme" and accepted.json()["role"] == "viewer"
    assert Membership.objects.get(workspace=acme, user=invitee).role == Role.VIEWER
    assert _waiting(invitee) == []
    assert _as(owner).get(INVITATIONS).json() == []  # a member now, on the members list
    assert _as(invitee).post(f"{MINE}{invitation['id']}/accept/").status_code == 404


def test_a_declined_invitation_makes_no_member_and_the_inviter_is_not_told(owner, acme, invitee):
    _invite(owner, "newbie")
    _invite(owner, "nobody")
    [invitation] = _waiting(invitee)
    assert _as(invitee).post(f"{MINE}{invitation['id']}/decline/").status_code == 204
    assert _waiting(invitee) == []
    assert not _is_member(invitee, acme)
    # Declined and never-anyone's look alike to the owner.
    assert {row["user"] for row in _as(owner).get(INVITATIONS).json()} == {"newbie", "nobody"}
    assert _as(invitee).post(f"{MINE}{invitation['id']}/accept/").status_code == 404


def test_a_withdrawn_invitation_cannot_be_accepted(owner, acme, invitee):
    made = _invite(owner, "newbie").json()
    editor = UserFactory(username="ed")
    _invite(owner, "ed")
    _as(editor).post(f"{MINE}{_waiting(editor)[0]['id']}/accept/")
    assert _as(editor).delete(f"{INVITATIONS}{made['id']}/").status_code == 403
    assert _as(owner).delete(f"{INVITATIONS}{made['id']}/").status_code == 204
    assert _as(owner).delete(f"{INVITATIONS}{made['id']}/").status_code == 404
    assert _waiting(invitee) == []
    assert _as(invitee).post(f"{MINE}{made['id']}/accept/").status_code == 404
    assert not _is_member(invitee, acme)


def test_an_invitation_expires(owner, acme, invitee, settings):
    from workspaces.models import Invitation

    made = _invite(owner, "newbie").json()
    expected_end = timezone.now() + timedelta(days=settings.WORKSPACE_INVITATION_DAYS)
    invitation = Invitation.objects.get(pk=made["id"])
    assert abs((invitation.expires_at - expected_end).total_seconds()) < 60
    # The days pass.
    Invitation.objects.filter(pk=made["id"]).update(expires_at=timezone.now() - timedelta(1))
    assert _waiting(invitee) == []
    assert _as(owner).get(INVITATIONS).json() == []
    assert _as(invitee).post(f"{MINE}{made['id']}/accept/").status_code == 404
    assert not _is_member(invitee, acme)


def test_an_inviter_who_is_no_longer_an_owner_takes_the_offer_back(owner, acme, invitee):
    other_owner = UserFactory(username="otto")
    _invite(owner, "otto", role="owner")
    _as(other_owner).post(f"{MINE}{_waiting(other_owner)[0]['id']}/accept/")
    made = _invite(other_owner, "newbie", role="owner").json()
    member_set_role(by=owner, workspace=acme, username="otto", role=Role.VIEWER)
    assert _as(invitee).post(f"{MINE}{made['id']}/accept/").status_code == 404
    assert not _is_member(invitee, acme)


def test_api_keys_neither_list_nor_answer_invitations(owner, acme, invitee):
    made = _invite(owner, "newbie").json()
    key = native(key_of(invitee))
    assert key.get(MINE).status_code == 403
    assert key.post(f"{MINE}{made['id']}/accept/").status_code == 403
    assert not _is_member(invitee, acme)


# --- The pages --------------------------------------------------------------------------------


def test_the_members_page_invites_lists_and_withdraws(owner, acme, invitee):
    client = _signed_in(owner)
    url = reverse("workspace", args=["acme"])
    for address in ("newbie@example.com", "nobody@example.com"):
        sent = client.post(url, {"action": "add", "username": address, "role": "owner"})
        assert sent.status_code == 302
        shown = client.get(url)
        text = shown.content.decode()
        assert f"Invited {address} as owner" in text
        assert "No user" not in text
    assert not _is_member(invitee, acme)
    page = client.get(url)
    assert [i.address for i in page.context["invitations"]] == [
        "nobody@example.com",
        "newbie@example.com",
    ]
    assert 'data-invitation="newbie@example.com"' in page.content.decode()
    assert ">newbie<" not in page.content.decode()
    withdrawn = page.context["invitations"][1]
    assert client.post(url, {"action": "withdraw", "invitation": withdrawn.pk}).status_code == 302
    assert [i.address for i in client.get(url).context["invitations"]] == ["nobody@example.com"]
    # Members who do not manage see no invitations.
    viewer = UserFactory(username="vi")
    _invite(owner, "vi", role="viewer")
    _as(viewer).post(f"{MINE}{_waiting(viewer)[0]['id']}/accept/")
    assert "invitation-list" not in _signed_in(viewer).get(url).content.decode()


def test_the_invitee_accepts_or_declines_on_their_pages(owner, acme, invitee):
    other = workspace_create(user=owner, name="Other team", slug="other-team")
    _invite(owner, "newbie", role="editor")
    _invite(owner, "newbie", role="viewer", path="/api/v1/workspaces/other-team/members/")
    client = _signed_in(invitee)
    dashboard = client.get(reverse("dashboard")).content.decode()
    assert "2 invitations to workspaces wait" in dashboard
    page = client.get(reverse("workspaces"))
    waiting = {i.workspace.slug: i for i in page.context["invitations"]}
    assert set(waiting) == {"acme", "other-team"}
    assert "Accept the invitation to Acme" in page.content.decode()

    accepted = client.post(
        reverse("workspaces"), {"action": "accept", "invitation": waiting["acme"].pk}
    )
    assert accepted.status_code == 302 and accepted["Location"] == reverse(
        "workspace", args=["acme"]
    )
    assert Membership.objects.get(workspace=acme, user=invitee).role == Role.EDITOR
    declined = client.post(
        reverse("workspaces"), {"action": "decline", "invitation": waiting["other-team"].pk}
    )
    assert declined.status_code == 302
    assert not _is_member(invitee, other)
    assert "invitations to workspaces wait" not in client.get(reverse("dashboard")).content.decode()
    # Someone else's invitation: nothing happens.
    _invite(owner, "nobody")
    stranger = _signed_in(UserFactory(username="nobody2"))
    stranger.post(reverse("workspaces"), {"action": "accept", "invitation": waiting["acme"].pk})
    assert not Membership.objects.filter(workspace=acme, user__username="nobody2").exists()


# --- Personal workspaces are never confusable --------------------------------------------------


def test_a_team_cannot_take_the_slug_of_a_users_name(owner):
    UserFactory(username="New.User")  # its slug is "newuser"
    client = _signed_in(owner)
    for slug in ("newuser", "NewUser", "olga"):
        refused = _as(owner).post(
            "/api/v1/workspaces/", {"name": "Squat", "slug": slug}, format="json"
        )
        assert refused.status_code == 400 and "slug" in refused.json(), slug
    page = client.post(reverse("workspaces"), {"name": "Squat", "slug": "newuser"})
    assert page.status_code == 400
    # A name that gives a user's slug gets another.
    made = _as(owner).post("/api/v1/workspaces/", {"name": "NewUser"}, format="json")
    assert made.status_code == 201 and made.json()["slug"] == "newuser-2"


def test_a_users_name_stays_theirs_when_their_workspace_has_another_slug(owner):
    # "sam" was a team's when the account sam was made; that team is gone now.
    early = workspace_create(user=owner, name="Sam", slug="sam")
    sam = UserFactory(username="Sam")
    assert personal_workspace_of(sam).slug == "sam--2"
    early.delete()
    refused = _as(owner).post("/api/v1/workspaces/", {"name": "Sam", "slug": "sam"}, format="json")
    assert refused.status_code == 400 and "taken" in refused.json()["slug"][0]
    made = _as(owner).post("/api/v1/workspaces/", {"name": "Sam"}, format="json")
    assert made.json()["slug"] == "sam-2"


@pytest.mark.parametrize("slug", ["switch", "team--2"])
def test_reserved_team_slugs(owner, slug):
    refused = _as(owner).post("/api/v1/workspaces/", {"name": "X", "slug": slug}, format="json")
    assert refused.status_code == 400 and "reserved" in refused.json()["slug"][0]


def test_a_squatted_slug_cannot_capture_the_new_users_links(owner):
    """The audit's chain: a team workspace made with slug "newuser" before the account
    newuser exists, the new user added to it, their `"workspace": "newuser"` link."""
    squat = _as(owner).post(
        "/api/v1/workspaces/", {"name": "newuser", "slug": "newuser"}, format="json"
    )
    assert squat.status_code == 201
    newuser = UserFactory(username="newuser")
    personal = personal_workspace_of(newuser)
    assert personal.slug == "newuser--2"  # cannot be any future user's own slug
    _as(owner).post(
        "/api/v1/workspaces/newuser/members/", {"user": "newuser", "role": "owner"}, format="json"
    )
    assert not Membership.objects.filter(workspace__slug="newuser", user=newuser).exists()

    def create(**extra) -> dict:
        made = _as(newuser).post(
            "/api/v1/links/",
            {
                "long_url": f"https://example.com/{len(extra)}",
                "workspace": "newuser",
                **extra,
            },
            format="json",
        )
        assert made.status_code == 201, made.content
        return made.json()

    assert create()["workspace"] == "newuser--2"
    # Even once they accept the squatter's invitation, their own name is their own workspace.
    _as(newuser).post(f"{MINE}{_waiting(newuser)[0]['id']}/accept/")
    assert create(title="after")["workspace"] == "newuser--2"
    assert _as(newuser).get("/api/v1/workspaces/newuser/").json()["slug"] == "newuser--2"
    assert not UrlLink.objects.filter(workspace__slug="newuser").exists()
    listed = _as(owner).get("/api/v1/links/", {"workspace": "newuser"}).json()
    assert listed["count"] == 0
    # A key made for "newuser" acts for their own workspace; the page keeps the team's reachable.
    _, key = api_key_create(user=newuser, name="tool", workspace="newuser")
    shlink = Client(HTTP_X_API_KEY=key).post(
        "/rest/v3/short-urls",
        {"longUrl": "https://example.com/shlink"},
        content_type="application/json",
    )
    assert shlink.status_code == 200, shlink.content
    assert UrlLink.objects.get(code=shlink.json()["shortCode"]).workspace == personal
    team_page = _signed_in(newuser).get(reverse("workspace", args=["newuser"]))
    assert team_page.context["workspace"].slug == "newuser"


def test_the_compat_layers_create_in_the_callers_own_workspace_despite_a_squat(owner):
    _as(owner).post("/api/v1/workspaces/", {"name": "newuser", "slug": "newuser"}, format="json")
    newuser = UserFactory(username="newuser")
    _as(owner).post(
        "/api/v1/workspaces/newuser/members/", {"user": "newuser", "role": "owner"}, format="json"
    )
    _as(newuser).post(f"{MINE}{_waiting(newuser)[0]['id']}/accept/")
    token = token_of(newuser)
    shlink = Client(HTTP_X_API_KEY=token).post(
        "/rest/v3/short-urls", {"longUrl": "https://example.com/s"}, content_type="application/json"
    )
    yourls = Client().get(
        "/yourls-api.php",
        {
            "format": "json",
            "signature": token,
            "action": "shorturl",
            "url": "https://example.com/y",
        },
    )
    bitly = Client(HTTP_AUTHORIZATION=f"Bearer {token}").post(
        "/v4/shorten", {"long_url": "https://example.com/b"}, content_type="application/json"
    )
    for response in (shlink, yourls, bitly):
        assert response.status_code in (200, 201), response.content
    assert set(UrlLink.objects.values_list("workspace__slug", flat=True)) == {"newuser--2"}


def test_an_older_squat_keeps_working_for_everyone_but_cannot_capture_its_namesake(owner):
    """Data from before the rule: a personal workspace pushed to "legacy-2" by a team that
    holds "legacy". The team's members keep it; "legacy" from legacy is their own."""
    team = Workspace.objects.create(slug="legacy", name="legacy")
    Membership.objects.create(workspace=team, user=owner, role=Role.OWNER)
    legacy = UserFactory(username="legacy")
    personal = personal_workspace_of(legacy)
    Workspace.objects.filter(pk=personal.pk).update(slug="legacy-2")
    Membership.objects.create(workspace=team, user=legacy, role=Role.EDITOR)
    body = {"long_url": "https://example.com/l", "workspace": "legacy"}
    assert _as(legacy).post("/api/v1/links/", body, format="json").json()["workspace"] == "legacy-2"
    assert _as(owner).post("/api/v1/links/", body, format="json").json()["workspace"] == "legacy"
    # legacy's own slug stays taken for teams.
    refused = _as(owner).post(
        "/api/v1/workspaces/", {"name": "x", "slug": "legacy-2"}, format="json"
    )
    assert refused.status_code == 400
