"""Workspaces in the native API (#16): members read a workspace's links, stats, tags and
webhooks; owners and editors write; viewers are refused with 403 saying why; everyone else meets
404. A DRF token acts in every workspace of its user, an API key in its own one only."""

from __future__ import annotations

import pytest
from django.contrib import admin

from analytics.models import HourlyClick
from core.api.scopes import ApiScope
from links.models import UrlLink
from links.services.change import link_update
from links.tests.factories import UrlLinkFactory
from webhooks import services as webhook_services
from webhooks.models import Webhook
from workspaces.models import Membership, Role, Workspace
from workspaces.tests.helpers import key_of, native, token_of

pytestmark = pytest.mark.django_db

PUBLIC_HOOK = "https://93.184.215.14/hook"


def _as(user):
    return native(token_of(user))


def _codes(response) -> set[str]:
    assert response.status_code == 200, response.content
    return {item["code"] for item in response.json()["results"]}


# --- Links: who reads, who writes --------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["/api/v1/links/acme-sale/", "/api/v1/links/acme-sale/stats/", "/api/v1/links/acme-sale/qr/"],
)
def test_every_member_reads_a_workspace_link_and_outsiders_get_404(team, path):
    for member in (team.owner, team.editor, team.viewer):
        assert _as(member).get(path).status_code == 200, member
    response = _as(team.outsider).get(path)
    assert response.status_code == 404
    assert response.json() == {"detail": "No link with this code."}


def test_the_link_object_names_its_workspace(team):
    body = _as(team.viewer).get("/api/v1/links/acme-sale/").json()
    assert body["workspace"] == "acme"
    mine = _as(team.owner).get("/api/v1/links/own-note/").json()
    assert mine["workspace"] == team.personal.slug


def test_a_viewer_cannot_change_revoke_or_create_in_the_workspace(team):
    api = _as(team.viewer)
    changed = api.patch("/api/v1/links/acme-sale/", {"title": "Mine now"}, format="json")
    revoked = api.delete("/api/v1/links/acme-sale/")
    created = api.post(
        "/api/v1/links/", {"long_url": "https://example.com/v", "workspace": "acme"}, format="json"
    )
    bulk = api.post(
        "/api/v1/links/bulk/",
        {"workspace": "acme", "items": [{"long_url": "https://example.com/b"}]},
        format="json",
    )
    for response in (changed, revoked, created, bulk):
        assert response.status_code == 403, response.content
        assert response.json()["detail"] == (
            "Viewers of the workspace 'acme' cannot create or change its links."
            if response in (created, bulk)
            else "Viewers of the workspace 'acme' cannot change its links."
        )
    team.link.refresh_from_db()
    assert team.link.title == "" and team.link.revoked_at is None
    assert not UrlLink.objects.filter(long_url__startswith="https://example.com/").exists()


def test_outsiders_cannot_change_revoke_or_create_in_the_workspace(team):
    api = _as(team.outsider)
    assert api.patch("/api/v1/links/acme-sale/", {"title": "x"}, format="json").status_code == 404
    assert api.delete("/api/v1/links/acme-sale/").status_code == 404
    created = api.post(
        "/api/v1/links/", {"long_url": "https://example.com/o", "workspace": "acme"}, format="json"
    )
    assert created.status_code == 400
    assert created.json() == {"workspace": ["No workspace 'acme' that you belong to."]}
    bulk = api.post(
        "/api/v1/links/bulk/",
        {"workspace": "acme", "items": [{"long_url": "https://example.com/o"}]},
        format="json",
    )
    assert bulk.status_code == 400
    assert "workspace" in bulk.json()
    listed = api.get("/api/v1/links/?workspace=acme")
    assert listed.status_code == 404
    assert listed.json() == {"detail": "No workspace with this slug that you belong to."}
    assert "acme-sale" not in _codes(api.get("/api/v1/links/"))


def test_an_editor_creates_changes_and_revokes_in_the_workspace(team):
    api = _as(team.editor)
    created = api.post(
        "/api/v1/links/", {"long_url": "https://example.com/e", "workspace": "acme"}, format="json"
    )
    assert created.status_code == 201, created.content
    assert created.json()["workspace"] == "acme"
    link = UrlLink.objects.get(code=created.json()["code"])
    assert link.workspace == team.workspace and link.owner == team.editor
    changed = api.patch("/api/v1/links/acme-sale/", {"title": "Edited"}, format="json")
    assert changed.status_code == 200 and changed.json()["title"] == "Edited"
    assert api.delete("/api/v1/links/acme-sale/").status_code == 204
    # And the owner sees what the editor made.
    assert created.json()["code"] in _codes(_as(team.owner).get("/api/v1/links/?workspace=acme"))


def test_bulk_puts_every_item_in_the_calls_workspace(team):
    body = {
        "workspace": "acme",
        "items": [
            {"long_url": "https://example.com/b1"},
            {"long_url": "https://example.com/b2", "workspace": "acme"},
            {"long_url": "https://example.com/b3", "workspace": team.personal.slug},
        ],
    }
    response = _as(team.editor).post("/api/v1/links/bulk/", body, format="json")
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert [r["status"] for r in results] == [201, 201, 400]
    assert {r["link"]["workspace"] for r in results[:2]} == {"acme"}
    assert "workspace" in results[2]["errors"]
    assert set(
        UrlLink.objects.filter(code__in=[r["link"]["code"] for r in results[:2]]).values_list(
            "workspace__slug", flat=True
        )
    ) == {"acme"}


def test_a_token_acts_in_every_workspace_and_creates_in_the_personal_one(team):
    api = _as(team.owner)
    assert _codes(api.get("/api/v1/links/")) == {"acme-sale", "own-note"}
    assert _codes(api.get("/api/v1/links/?workspace=acme")) == {"acme-sale"}
    assert _codes(api.get(f"/api/v1/links/?workspace={team.personal.slug}")) == {"own-note"}
    assert api.patch("/api/v1/links/acme-sale/", {"title": "T"}, format="json").status_code == 200
    assert api.patch("/api/v1/links/own-note/", {"title": "T"}, format="json").status_code == 200
    made = api.post("/api/v1/links/", {"long_url": "https://example.com/t"}, format="json")
    assert made.status_code == 201 and made.json()["workspace"] == team.personal.slug


def test_a_pinned_key_cannot_reach_another_workspace_of_its_user(team):
    api = native(key_of(team.owner))  # the owner's personal workspace
    assert _codes(api.get("/api/v1/links/")) == {"own-note"}
    for response in (
        api.get("/api/v1/links/acme-sale/"),
        api.get("/api/v1/links/acme-sale/stats/"),
        api.get("/api/v1/links/acme-sale/qr/"),
        api.patch("/api/v1/links/acme-sale/", {"title": "x"}, format="json"),
        api.delete("/api/v1/links/acme-sale/"),
        api.get("/api/v1/links/?workspace=acme"),
        api.get("/api/v1/tags/?workspace=acme"),
    ):
        assert response.status_code == 404, response.content
    created = api.post(
        "/api/v1/links/", {"long_url": "https://example.com/k", "workspace": "acme"}, format="json"
    )
    assert created.status_code == 400
    assert created.json() == {"workspace": ["This API key acts for another workspace."]}
    bulk = api.post(
        "/api/v1/links/bulk/",
        {"workspace": "acme", "items": [{"long_url": "https://example.com/k"}]},
        format="json",
    )
    assert bulk.status_code == 400 and "workspace" in bulk.json()
    team.link.refresh_from_db()
    assert team.link.title == "" and team.link.revoked_at is None


def test_a_key_for_the_team_workspace_creates_and_lists_there(team):
    api = native(key_of(team.editor, workspace="acme"))
    made = api.post("/api/v1/links/", {"long_url": "https://example.com/p"}, format="json")
    assert made.status_code == 201 and made.json()["workspace"] == "acme"
    assert _codes(api.get("/api/v1/links/")) == {"acme-sale", made.json()["code"]}
    bulk = api.post(
        "/api/v1/links/bulk/", {"items": [{"long_url": "https://example.com/q"}]}, format="json"
    )
    assert bulk.json()["results"][0]["link"]["workspace"] == "acme"


def test_a_viewers_key_reads_only(team):
    api = native(key_of(team.viewer, workspace="acme"))
    assert _codes(api.get("/api/v1/links/")) == {"acme-sale"}
    made = api.post("/api/v1/links/", {"long_url": "https://example.com/v"}, format="json")
    assert made.status_code == 403
    assert "Viewers" in made.json()["detail"]


def test_staff_read_any_workspace_with_a_token(team, staff_user):
    api = _as(staff_user)
    assert _codes(api.get("/api/v1/links/?workspace=acme")) == {"acme-sale"}
    assert api.get("/api/v1/links/acme-sale/").status_code == 200


# --- Tags and their stats ----------------------------------------------------------------------


def test_tags_are_a_workspaces_and_workspace_selects_them(team):
    link_update(code="acme-sale", user=team.owner, tags=["launch"])
    link_update(code="own-note", user=team.owner, tags=["private"])
    owner = _as(team.owner)
    assert owner.get("/api/v1/tags/").json() == [{"name": "private", "links": 1}]
    assert owner.get("/api/v1/tags/?workspace=acme").json() == [{"name": "launch", "links": 1}]
    assert _as(team.viewer).get("/api/v1/tags/?workspace=acme").json() == [
        {"name": "launch", "links": 1}
    ]
    assert native(key_of(team.editor, workspace="acme")).get("/api/v1/tags/").json() == [
        {"name": "launch", "links": 1}
    ]
    assert _as(team.outsider).get("/api/v1/tags/?workspace=acme").status_code == 404


def test_tag_stats_follow_the_workspace(team):
    link_update(code="acme-sale", user=team.owner, tags=["launch"])
    HourlyClick.objects.create(
        link=team.link,
        hour=team.link.created_at.replace(minute=0, second=0, microsecond=0),
        clicks=3,
        unique_visitors=2,
    )
    viewer = _as(team.viewer).get("/api/v1/tags/launch/stats/?workspace=acme")
    assert viewer.status_code == 200 and viewer.json()["links"] == 1
    # Without ?workspace=: the personal workspace's tag of that name, which does not exist.
    assert _as(team.viewer).get("/api/v1/tags/launch/stats/").status_code == 404
    assert _as(team.outsider).get("/api/v1/tags/launch/stats/?workspace=acme").status_code == 404
    pinned = native(key_of(team.owner))
    assert pinned.get("/api/v1/tags/launch/stats/?workspace=acme").status_code == 404
    assert (
        native(key_of(team.viewer, workspace="acme")).get("/api/v1/tags/launch/stats/").status_code
        == 200
    )


# --- Webhooks ----------------------------------------------------------------------------------


@pytest.fixture
def acme_hook(team) -> Webhook:
    return webhook_services.webhook_create(
        user=team.owner, url=PUBLIC_HOOK, events=["link.created"], workspace="acme"
    )


def test_webhooks_show_their_workspace_to_owners_and_editors_only(team, acme_hook):
    for member in (team.owner, team.editor):
        body = _as(member).get(f"/api/v1/webhooks/{acme_hook.pk}/").json()
        assert body["workspace"] == "acme"
    assert [w["id"] for w in _as(team.editor).get("/api/v1/webhooks/?workspace=acme").json()] == [
        acme_hook.pk
    ]
    # A webhook carries the secret that signs its deliveries: never shown to viewers.
    assert _as(team.viewer).get(f"/api/v1/webhooks/{acme_hook.pk}/").status_code == 404
    assert _as(team.viewer).get("/api/v1/webhooks/?workspace=acme").json() == []
    assert _as(team.owner).get(f"/api/v1/webhooks/?workspace={team.personal.slug}").json() == []


def test_a_viewer_cannot_add_change_or_delete_webhooks(team, acme_hook):
    api = _as(team.viewer)
    made = api.post(
        "/api/v1/webhooks/",
        {"url": PUBLIC_HOOK, "events": ["link.created"], "workspace": "acme"},
        format="json",
    )
    changed = api.patch(f"/api/v1/webhooks/{acme_hook.pk}/", {"is_active": False}, format="json")
    deleted = api.delete(f"/api/v1/webhooks/{acme_hook.pk}/")
    assert made.status_code == 403 and "Viewers" in made.json()["detail"]
    # The ones already there are not shown to viewers at all: 404, as for outsiders.
    assert changed.status_code == deleted.status_code == 404
    acme_hook.refresh_from_db()
    assert acme_hook.is_active is True


def test_outsiders_and_other_keys_meet_404_for_a_workspaces_webhooks(team, acme_hook):
    outsider = _as(team.outsider)
    assert outsider.get(f"/api/v1/webhooks/{acme_hook.pk}/").status_code == 404
    assert outsider.get("/api/v1/webhooks/?workspace=acme").status_code == 404
    made = outsider.post(
        "/api/v1/webhooks/",
        {"url": PUBLIC_HOOK, "events": ["link.created"], "workspace": "acme"},
        format="json",
    )
    assert made.status_code == 400 and "workspace" in made.json()
    pinned = native(key_of(team.owner))  # personal
    assert pinned.get("/api/v1/webhooks/").json() == []
    assert pinned.get(f"/api/v1/webhooks/{acme_hook.pk}/").status_code == 404
    assert pinned.delete(f"/api/v1/webhooks/{acme_hook.pk}/").status_code == 404
    assert Webhook.objects.filter(pk=acme_hook.pk).exists()


def test_an_editor_adds_a_webhook_to_the_workspace(team):
    made = _as(team.editor).post(
        "/api/v1/webhooks/",
        {"url": PUBLIC_HOOK, "events": ["link.created"], "workspace": "acme"},
        format="json",
    )
    assert made.status_code == 201, made.content
    assert made.json()["workspace"] == "acme"
    keyed = native(key_of(team.editor, workspace="acme")).post(
        "/api/v1/webhooks/", {"url": PUBLIC_HOOK, "events": ["link.updated"]}, format="json"
    )
    assert keyed.status_code == 201 and keyed.json()["workspace"] == "acme"
    own = _as(team.editor).post(
        "/api/v1/webhooks/", {"url": PUBLIC_HOOK, "events": ["link.updated"]}, format="json"
    )
    assert own.json()["workspace"] == "ed"


# --- /api/v1/workspaces/ -----------------------------------------------------------------------


def test_list_the_callers_workspaces_with_their_role(team):
    body = _as(team.owner).get("/api/v1/workspaces/").json()
    assert [(w["slug"], w["personal"], w["role"], w["members"]) for w in body] == [
        (team.personal.slug, True, "owner", 1),
        ("acme", False, "owner", 3),
    ]
    viewer = _as(team.viewer).get("/api/v1/workspaces/").json()
    assert [(w["slug"], w["role"]) for w in viewer] == [("vi", "owner"), ("acme", "viewer")]
    assert [w["slug"] for w in _as(team.outsider).get("/api/v1/workspaces/").json()] == ["rival"]


def test_a_pinned_key_lists_and_reaches_only_its_workspace(team):
    api = native(key_of(team.owner, workspace="acme"))
    assert [w["slug"] for w in api.get("/api/v1/workspaces/").json()] == ["acme"]
    assert api.get("/api/v1/workspaces/acme/").status_code == 200
    assert api.get(f"/api/v1/workspaces/{team.personal.slug}/").status_code == 404
    made = api.post("/api/v1/workspaces/", {"name": "Side project"}, format="json")
    assert made.status_code == 403


def test_create_a_team_workspace(team):
    api = _as(team.outsider)
    made = api.post("/api/v1/workspaces/", {"name": "Rival Co", "slug": "rivalco"}, format="json")
    assert made.status_code == 201, made.content
    assert made.json() | {"created_at": None} == {
        "slug": "rivalco",
        "name": "Rival Co",
        "personal": False,
        "role": "owner",
        "members": 1,
        "created_at": None,
        "raw_retention_days": None,  # the install's setting, unset in the tests: kept for good
        "effective_retention_days": None,
        "api_rate_limit": None,
        "analytics_privacy": "",
        "privacy_mode": "full",
    }
    taken = api.post("/api/v1/workspaces/", {"name": "Again", "slug": "acme"}, format="json")
    assert taken.status_code == 400 and "slug" in taken.json()
    unnamed = api.post("/api/v1/workspaces/", {"name": " "}, format="json")
    assert unnamed.status_code == 400 and "name" in unnamed.json()
    slugged = api.post("/api/v1/workspaces/", {"name": "Rival Labs"}, format="json")
    assert slugged.json()["slug"] == "rival-labs"


def test_get_and_rename_a_workspace(team):
    assert _as(team.viewer).get("/api/v1/workspaces/acme/").json()["role"] == "viewer"
    assert _as(team.outsider).get("/api/v1/workspaces/acme/").status_code == 404
    assert (
        _as(team.outsider)
        .patch("/api/v1/workspaces/acme/", {"name": "Mine"}, format="json")
        .status_code
        == 404
    )
    refused = _as(team.editor).patch("/api/v1/workspaces/acme/", {"name": "Ed's"}, format="json")
    assert refused.status_code == 403
    assert refused.json() == {"detail": "Only the workspace's owners can manage it."}
    renamed = _as(team.owner).patch("/api/v1/workspaces/acme/", {"name": "Acme Inc"}, format="json")
    assert renamed.status_code == 200 and renamed.json()["name"] == "Acme Inc"
    assert Workspace.objects.get(slug="acme").name == "Acme Inc"


def test_members_are_listed_to_members_and_managed_by_owners(team, django_user_model):
    django_user_model.objects.create_user("newbie", email="newbie@example.com", password="x-pass-1")
    members = _as(team.viewer).get("/api/v1/workspaces/acme/members/").json()
    assert [(m["user"], m["role"]) for m in members] == [
        ("marketer", "owner"),
        ("ed", "editor"),
        ("vi", "viewer"),
    ]
    assert _as(team.outsider).get("/api/v1/workspaces/acme/members/").status_code == 404
    for api in (_as(team.editor), _as(team.viewer)):
        refused = api.post(
            "/api/v1/workspaces/acme/members/", {"user": "newbie", "role": "viewer"}, format="json"
        )
        assert refused.status_code == 403
    owner = _as(team.owner)
    # Adding someone invites them (workspaces/tests/test_invitations.py): a member once they
    # accept.
    invited = owner.post(
        "/api/v1/workspaces/acme/members/",
        {"user": "newbie@example.com", "role": "editor"},
        format="json",
    )
    assert invited.status_code == 202, invited.content
    assert invited.json()["user"] == "newbie@example.com" and invited.json()["role"] == "editor"
    newbie = _as(django_user_model.objects.get(username="newbie"))
    [invitation] = newbie.get("/api/v1/invitations/").json()
    assert newbie.post(f"/api/v1/invitations/{invitation['id']}/accept/").status_code == 200
    bad_role = owner.post(
        "/api/v1/workspaces/acme/members/", {"user": "newbie", "role": "boss"}, format="json"
    )
    assert bad_role.status_code == 400 and "role" in bad_role.json()
    changed = owner.patch(
        "/api/v1/workspaces/acme/members/newbie/", {"role": "viewer"}, format="json"
    )
    assert changed.status_code == 200 and changed.json()["role"] == "viewer"
    assert (
        _as(team.editor)
        .patch("/api/v1/workspaces/acme/members/vi/", {"role": "editor"}, format="json")
        .status_code
        == 403
    )
    last_owner = owner.patch(
        "/api/v1/workspaces/acme/members/marketer/", {"role": "editor"}, format="json"
    )
    assert last_owner.status_code == 400 and "user" in last_owner.json()
    assert owner.delete("/api/v1/workspaces/acme/members/newbie/").status_code == 204
    assert _as(team.editor).delete("/api/v1/workspaces/acme/members/vi/").status_code == 403
    # Any member may leave.
    assert _as(team.viewer).delete("/api/v1/workspaces/acme/members/vi/").status_code == 204
    assert set(
        Membership.objects.filter(workspace=team.workspace).values_list("user__username", "role")
    ) == {("marketer", Role.OWNER), ("ed", Role.EDITOR)}


def test_scopes_reading_needs_links_read_changing_links_write(team):
    reader = native(key_of(team.owner, workspace="acme", scopes=[ApiScope.LINKS_READ]))
    assert reader.get("/api/v1/workspaces/").status_code == 200
    assert reader.get("/api/v1/workspaces/acme/members/").status_code == 200
    refused = reader.post(
        "/api/v1/workspaces/acme/members/", {"user": "rival", "role": "viewer"}, format="json"
    )
    assert refused.status_code == 403 and "links:write" in refused.json()["detail"]
    assert reader.patch("/api/v1/workspaces/acme/", {"name": "x"}, format="json").status_code == 403
    stats_only = native(key_of(team.owner, workspace="acme", scopes=[ApiScope.STATS_READ]))
    assert stats_only.get("/api/v1/workspaces/").status_code == 403


def test_anonymous_callers_are_refused():
    from rest_framework.test import APIClient

    assert APIClient().get("/api/v1/workspaces/").status_code == 401


def test_an_outsiders_link_stays_theirs(team):
    theirs = UrlLinkFactory(owner=team.outsider, alias="rival-1")
    assert _as(team.owner).get("/api/v1/links/rival-1/").status_code == 404
    assert theirs.workspace.slug == "rival"


def test_a_blank_slug_names_no_workspace(team):
    response = _as(team.owner).get("/api/v1/workspaces/%C2%A0/")
    assert response.status_code == 404
    assert response.json() == {"detail": "No workspace with this slug that you belong to."}


@pytest.mark.parametrize(("days", "accepted"), [(36500, True), (36501, False)])
def test_the_admin_holds_a_workspace_to_the_retention_the_api_allows(
    team, rf, staff_user, days, accepted
):
    answer = _as(team.owner).patch(
        "/api/v1/workspaces/acme/", {"raw_retention_days": days}, format="json"
    )
    assert (answer.status_code == 200) is accepted, answer.content
    workspace = Workspace.objects.get(slug="acme")
    request = rf.get("/")
    request.user = staff_user
    form_class = admin.site._registry[Workspace].get_form(request, obj=workspace)
    form = form_class(
        data={"slug": "acme", "name": workspace.name, "raw_retention_days": str(days)},
        instance=workspace,
    )
    assert form.is_valid() is accepted, form.errors
    if not accepted:
        assert "raw_retention_days" in form.errors
