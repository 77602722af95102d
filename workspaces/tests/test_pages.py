"""The web pages in a workspace (#16): the current workspace and its switcher, the workspace
pages, and every dashboard page acting in the current workspace with the member's role.
Real database, the Django test client, no mocks."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from accounts.models import ApiKey
from links.models import LinkImport, UrlLink
from links.services.create import link_create
from links.services.domains import domain_save
from links.tests.factories import UrlLinkFactory, UserFactory
from webhooks.models import Webhook
from workspaces.current import SESSION_KEY
from workspaces.models import Membership, Role, Workspace
from workspaces.selectors import personal_workspace_of
from workspaces.services import member_add, member_remove, workspace_create

pytestmark = pytest.mark.django_db

PUBLIC_HOOK = "https://93.184.215.14/hook"


@pytest.fixture
def owner():
    return UserFactory(username="olivia")


@pytest.fixture
def team(owner):
    return workspace_create(user=owner, name="Marketing team", slug="marketing")


@pytest.fixture
def team_link(owner, team):
    return link_create(
        user=owner, workspace=team, long_url="https://team.example.com/spring", tags=["Spring"]
    ).link


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _switch(client: Client, slug: str):
    return client.post(reverse("workspace_switch"), {"workspace": slug})


def _member(team, owner, role: str, name: str):
    user = UserFactory(username=name)
    member_add(by=owner, workspace=team, username=name, role=role)
    return user


def _link_pages(link) -> list[str]:
    code = link.code
    return [
        reverse("link_stats", args=[code]),
        reverse("link_visits_csv", args=[code]),
        reverse("link_edit", args=[code]),
        reverse("link_revoke", args=[code]),
        reverse("link_qr_page", args=[code]),
        reverse("link_qr", args=[code, "png"]),
        reverse("link_qr", args=[code, "svg"]),
    ]


# --- The current workspace and the switcher ----------------------------------------------------


def test_the_switcher_changes_what_my_links_shows(owner, team, team_link):
    mine = UrlLinkFactory(owner=owner, long_url="https://personal.example.com/own")
    client = _signed_in(owner)

    page = client.get(reverse("dashboard")).content.decode()
    assert mine.long_url in page and team_link.long_url not in page
    # The header's switcher: labelled, a POST with its CSRF token, both workspaces offered.
    assert 'action="/workspaces/switch/"' in page
    assert '<label for="workspace-switch-select">Workspace</label>' in page
    assert 'value="marketing"' in page and "csrfmiddlewaretoken" in page

    response = client.post(
        reverse("workspace_switch"),
        {"workspace": "marketing"},
        HTTP_REFERER="http://testserver/dashboard/links/abc/",
    )
    assert response.status_code == 302
    assert response["Location"] == "/dashboard/"  # a link page of the old workspace: the list
    page = client.get(reverse("dashboard")).content.decode()
    assert team_link.long_url in page and mine.long_url not in page
    assert client.session[SESSION_KEY] == "marketing"

    # Back to the page it was done on otherwise.
    response = client.post(
        reverse("workspace_switch"), {"workspace": owner.username}, HTTP_REFERER="/webhooks/x"
    )
    assert response["Location"] == "/webhooks/x"


def test_the_switcher_refuses_a_workspace_one_does_not_belong_to(team):
    stranger = UserFactory(username="stranger")
    client = _signed_in(stranger)
    assert _switch(client, "marketing").status_code == 404
    assert SESSION_KEY not in client.session


def test_the_switch_needs_the_csrf_token(owner, team):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert _switch(client, "marketing").status_code == 403


def test_a_removed_member_falls_back_to_their_personal_workspace(owner, team, team_link):
    editor = _member(team, owner, Role.EDITOR, "eddie")
    client = _signed_in(editor)
    _switch(client, "marketing")
    assert team_link.long_url in client.get(reverse("dashboard")).content.decode()

    member_remove(by=owner, workspace=team, username="eddie")

    page = client.get(reverse("dashboard"))
    assert page.status_code == 200
    assert team_link.long_url not in page.content.decode()
    assert client.session.get(SESSION_KEY) is None
    assert client.get(reverse("link_stats", args=[team_link.code])).status_code == 404


def test_tag_filter_suggestions_and_tag_stats_are_the_current_workspaces(owner, team, team_link):
    link_create(user=owner, long_url="https://personal.example.com/x", tags=["Private"])
    client = _signed_in(owner)
    _switch(client, "marketing")

    home = client.get(reverse("home")).content.decode()
    assert '<option value="Spring">' in home and "Private" not in home
    assert client.get(reverse("tag_stats", args=["Spring"])).status_code == 200
    assert client.get(reverse("tag_stats", args=["Private"])).status_code == 404
    listed = client.get(reverse("dashboard"), {"tag": "Spring"})
    assert [row["link"].pk for row in listed.context["rows"]] == [team_link.pk]
    assert listed.context["stats_tag"].name == "Spring"


def test_create_lands_in_the_current_workspace(owner, team):
    client = _signed_in(owner)
    _switch(client, "marketing")
    response = client.post(
        reverse("home"), {"long_url": "https://made.example.com/", "redirect_type": "302"}
    )
    assert response.status_code == 302
    link = UrlLink.objects.get(long_url="https://made.example.com/")
    assert link.workspace_id == team.pk and link.owner_id == owner.pk


def test_the_create_form_leaves_out_domains_kept_for_another_workspace(owner, team):
    domain_save(host="team.example.test", workspace=team)
    domain_save(host="shared.example.test")
    client = _signed_in(owner)

    personal = client.get(reverse("home")).content.decode()
    assert "shared.example.test" in personal and "team.example.test" not in personal
    refused = client.post(
        reverse("home"),
        {
            "long_url": "https://x.example.com/",
            "redirect_type": "302",
            "domain": "team.example.test",
        },
    )
    assert refused.status_code == 200 and refused.context["form"].errors["domain"]
    assert not UrlLink.objects.filter(long_url__contains="x.ex").exists()

    _switch(client, "marketing")
    in_team = client.get(reverse("home")).content.decode()
    assert "shared.example.test" in in_team and "team.example.test" in in_team


# --- Viewers and non-members --------------------------------------------------------------------


def test_a_viewer_reads_links_and_stats_but_changes_nothing(owner, team, team_link):
    viewer = _member(team, owner, Role.VIEWER, "vera")
    client = _signed_in(viewer)
    _switch(client, "marketing")

    listed = client.get(reverse("dashboard")).content.decode()
    assert team_link.long_url in listed
    assert reverse("link_edit", args=[team_link.code]) not in listed
    assert client.get(reverse("link_stats", args=[team_link.code])).status_code == 200
    assert client.get(reverse("link_qr_page", args=[team_link.code])).status_code == 200
    assert client.get(reverse("link_visits_csv", args=[team_link.code])).status_code == 200
    assert client.get(reverse("tag_stats", args=["Spring"])).status_code == 200

    home = client.get(reverse("home"))
    assert home.status_code == 200
    assert 'data-testid="viewer-notice"' in home.text and 'name="long_url"' not in home.text

    for url in (
        reverse("link_edit", args=[team_link.code]),
        reverse("link_revoke", args=[team_link.code]),
    ):
        got = client.get(url)
        assert got.status_code == 403, url
        assert "<main" in got.text  # the friendly 403 page, not a bare error
        assert client.post(url, {"title": "x"}).status_code == 403, url
    assert (
        client.post(reverse("link_archive", args=[team_link.code]), {"archived": "1"}).status_code
        == 403
    )
    assert client.post(reverse("home"), {"long_url": "https://v.example.com/"}).status_code == 403
    upload = SimpleUploadedFile("links.csv", b"long_url\nhttps://imp.example.com/\n")
    assert (
        client.post(
            reverse("link_import"), {"file": upload, "file_format": "", "on_taken_code": "new"}
        ).status_code
        == 403
    )
    assert (
        client.post(
            reverse("webhooks"), {"url": PUBLIC_HOOK, "events": ["link.created"]}
        ).status_code
        == 403
    )
    team_link.refresh_from_db()
    assert team_link.revoked_at is None and not team_link.archived
    assert UrlLink.objects.filter(workspace=team).count() == 1
    assert not Webhook.objects.exists() and not LinkImport.objects.exists()


def test_a_non_member_gets_404_on_every_link_page_and_the_workspace(owner, team, team_link):
    client = _signed_in(UserFactory(username="outsider"))
    for url in _link_pages(team_link):
        assert client.get(url).status_code == 404, url
    assert client.post(reverse("link_revoke", args=[team_link.code])).status_code == 404
    assert client.post(reverse("link_edit", args=[team_link.code]), {}).status_code == 404
    assert (
        client.post(reverse("link_archive", args=[team_link.code]), {"archived": "1"}).status_code
        == 404
    )
    assert client.get(reverse("tag_stats", args=["Spring"])).status_code == 404
    response = client.get(reverse("workspace", args=["marketing"]))
    assert response.status_code == 404
    assert client.get(reverse("workspace", args=["nothing-here"])).status_code == 404
    assert (
        client.post(
            reverse("workspace", args=["marketing"]),
            {"action": "add", "username": "outsider", "role": "owner"},
        ).status_code
        == 404
    )
    assert not Membership.objects.filter(workspace=team, user__username="outsider").exists()


def test_an_editor_edits_and_revokes_the_teams_links(owner, team, team_link):
    editor = _member(team, owner, Role.EDITOR, "eddie")
    client = _signed_in(editor)
    _switch(client, "marketing")
    assert client.get(reverse("link_edit", args=[team_link.code])).status_code == 200
    response = client.post(reverse("link_revoke", args=[team_link.code]))
    assert response.status_code == 302
    team_link.refresh_from_db()
    assert team_link.revoked_at is not None


# --- The workspace pages ------------------------------------------------------------------------


def test_the_workspaces_page_lists_roles_and_makes_a_team_workspace(owner, team):
    client = _signed_in(owner)
    page = client.get(reverse("workspaces"))
    assert page.status_code == 200
    names = [(w.slug, w.role) for w in page.context["workspaces"]]
    assert names == [("olivia", "owner"), ("marketing", "owner")]

    refused = client.post(reverse("workspaces"), {"name": "Other", "slug": "marketing"})
    assert refused.status_code == 400
    assert "is taken" in refused.context["form"].errors["slug"][0]

    made = client.post(reverse("workspaces"), {"name": "Sales", "slug": ""})
    assert made.status_code == 302
    sales = Workspace.objects.get(name="Sales")
    assert made["Location"] == reverse("workspace", args=[sales.slug])
    assert Membership.objects.get(workspace=sales).role == Role.OWNER
    assert client.session[SESSION_KEY] == sales.slug  # the new one is the current one


def test_owners_add_change_and_remove_members(owner, team):
    UserFactory(username="newbie", email="newbie@example.com")
    client = _signed_in(owner)
    url = reverse("workspace", args=["marketing"])

    page = client.get(url).content.decode()
    assert "Invite someone" in page

    # Adding invites (workspaces/tests/test_invitations.py): a member once they accept.
    added = client.post(url, {"action": "add", "username": "newbie@example.com", "role": "viewer"})
    assert added.status_code == 302
    assert not Membership.objects.filter(workspace=team, user__username="newbie").exists()
    newbie = _signed_in(UserFactory._meta.model.objects.get(username="newbie"))
    [invitation] = newbie.get(reverse("workspaces")).context["invitations"]
    newbie.post(reverse("workspaces"), {"action": "accept", "invitation": invitation.pk})
    assert Membership.objects.get(workspace=team, user__username="newbie").role == Role.VIEWER

    changed = client.post(url, {"action": "role", "username": "newbie", "role": "editor"})
    assert changed.status_code == 302
    assert Membership.objects.get(workspace=team, user__username="newbie").role == Role.EDITOR

    removed = client.post(url, {"action": "remove", "username": "newbie"})
    assert removed.status_code == 302
    assert not Membership.objects.filter(workspace=team, user__username="newbie").exists()


def test_the_last_owner_stays(owner, team):
    client = _signed_in(owner)
    url = reverse("workspace", args=["marketing"])
    for data in (
        {"action": "leave"},
        {"action": "remove", "username": "olivia"},
        {"action": "role", "username": "olivia", "role": "viewer"},
    ):
        response = client.post(url, data)
        assert response.status_code == 400, data
        assert "at least one owner" in response.text
    assert Membership.objects.get(workspace=team, user=owner).role == Role.OWNER


def test_non_owners_read_the_members_and_may_leave(owner, team):
    editor = _member(team, owner, Role.EDITOR, "eddie")
    _member(team, owner, Role.VIEWER, "vera")
    client = _signed_in(editor)
    url = reverse("workspace", args=["marketing"])

    page = client.get(url)
    assert page.status_code == 200
    assert "Invite someone" not in page.text and 'name="role"' not in page.text
    assert "vera" in page.text and "olivia" in page.text

    for data in (
        {"action": "add", "username": "vera", "role": "owner"},
        {"action": "role", "username": "vera", "role": "owner"},
        {"action": "remove", "username": "vera"},
    ):
        assert client.post(url, data).status_code == 403, data
    assert Membership.objects.get(workspace=team, user__username="vera").role == Role.VIEWER

    left = client.post(url, {"action": "leave"})
    assert left.status_code == 302 and left["Location"] == reverse("workspaces")
    assert not Membership.objects.filter(workspace=team, user=editor).exists()


def test_the_workspace_forms_need_the_csrf_token(owner, team):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    UserFactory(username="newbie")
    url = reverse("workspace", args=["marketing"])
    assert (
        client.post(url, {"action": "add", "username": "newbie", "role": "editor"}).status_code
        == 403
    )
    assert client.post(reverse("workspaces"), {"name": "Sneaky"}).status_code == 403
    assert not Workspace.objects.filter(name="Sneaky").exists()
    assert not Membership.objects.filter(workspace=team, user__username="newbie").exists()


# --- Imports, webhooks and API keys land in the current workspace ------------------------------


def test_imports_webhooks_and_keys_land_in_the_current_workspace(owner, team):
    client = _signed_in(owner)
    _switch(client, "marketing")

    upload = SimpleUploadedFile("links.csv", b"long_url\nhttps://imp.example.com/\n")
    response = client.post(
        reverse("link_import"), {"file": upload, "file_format": "", "on_taken_code": "new"}
    )
    assert response.status_code == 302
    assert LinkImport.objects.get(owner=owner).workspace_id == team.pk

    response = client.post(reverse("webhooks"), {"url": PUBLIC_HOOK, "events": ["link.created"]})
    assert response.status_code == 302
    assert Webhook.objects.get().workspace_id == team.pk

    response = client.post(
        reverse("api_keys"), {"name": "Newsletter", "scopes": ["links:read"], "expires_in": ""}
    )
    assert response.status_code == 302
    key = ApiKey.objects.get(user=owner)
    assert key.workspace_id == team.pk
    page = client.get(reverse("api_keys")).content.decode()
    assert "Marketing team" in page

    # The personal workspace's webhook page does not list the team's webhook.
    _switch(client, owner.username)
    assert PUBLIC_HOOK not in client.get(reverse("webhooks")).content.decode()
    assert personal_workspace_of(owner).slug == client.session[SESSION_KEY]


def test_export_is_the_current_workspaces(owner, team, team_link):
    UrlLinkFactory(owner=owner, long_url="https://personal.example.com/own")
    client = _signed_in(owner)
    _switch(client, "marketing")
    body = b"".join(client.get(reverse("links_export", args=["csv"])).streaming_content)
    assert b"team.example.com/spring" in body and b"personal.example.com" not in body


# --- Admin ---------------------------------------------------------------------------------------


def _inline_post(workspace, rows):
    data = {
        "slug": workspace.slug,
        "name": workspace.name,
        "memberships-TOTAL_FORMS": str(len(rows)),
        "memberships-INITIAL_FORMS": str(len(rows)),
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
    }
    for i, (membership, role, delete) in enumerate(rows):
        data[f"memberships-{i}-id"] = str(membership.pk)
        data[f"memberships-{i}-workspace"] = str(workspace.pk)
        data[f"memberships-{i}-user"] = str(membership.user_id)
        data[f"memberships-{i}-role"] = role
        if delete:
            data[f"memberships-{i}-DELETE"] = "on"
    return data


def test_the_admins_membership_inline_keeps_an_owner(admin_client, owner, team):
    editor = _member(team, owner, Role.EDITOR, "eddie")
    own = Membership.objects.get(workspace=team, user=owner)
    theirs = Membership.objects.get(workspace=team, user=editor)
    url = reverse("admin:workspaces_workspace_change", args=[team.pk])

    for rows in (
        [(own, "editor", False), (theirs, "editor", False)],
        [(own, "owner", True), (theirs, "viewer", False)],
    ):
        response = admin_client.post(url, _inline_post(team, rows))
        assert response.status_code == 200  # the form again, with the error
        assert "at least one owner" in response.text
    assert Membership.objects.get(pk=own.pk).role == Role.OWNER

    response = admin_client.post(
        url, _inline_post(team, [(own, "editor", False), (theirs, "owner", False)])
    )
    assert response.status_code == 302
    assert Membership.objects.get(pk=theirs.pk).role == Role.OWNER

    personal = personal_workspace_of(owner)
    mine = Membership.objects.get(workspace=personal, user=owner)
    response = admin_client.post(
        reverse("admin:workspaces_workspace_change", args=[personal.pk]),
        _inline_post(personal, [(mine, "editor", False)]),
    )
    assert "at least one owner" in response.text or "stays the owner" in response.text


def test_the_admins_link_list_shows_and_filters_by_workspace(admin_client, owner, team, team_link):
    UrlLinkFactory(owner=owner, long_url="https://personal.example.com/own")
    response = admin_client.get(
        reverse("admin:links_urllink_changelist"), {"workspace": "marketing"}
    )
    assert response.status_code == 200
    assert list(response.context["cl"].result_list) == [team_link]
    assert "Marketing team" in response.text
