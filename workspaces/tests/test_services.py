"""Workspaces' services and selectors on the real database: personal workspaces, team
workspaces and their members, and the one rule (workspace_for_writing, link_get_changeable,
visible_to) that decides who sees and changes a workspace's links, tags, webhooks and kept
domains."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse

from accounts.services import api_key_create
from links.models import DEFAULT_DOMAIN_ID, Domain, Tag
from links.selectors import LinkNotFound, link_get_changeable, link_get_visible, link_list
from links.services.create import link_create
from links.services.domains import domain_save
from links.tests.factories import UserFactory
from webhooks.selectors import webhooks_hearing
from webhooks.services import webhook_create
from workspaces.models import Membership, Role, Workspace
from workspaces.selectors import (
    WorkspaceNotFound,
    can_write,
    members_of,
    personal_workspace_of,
    pinned_workspace_id,
    role_in,
    workspace_get,
    workspaces_of,
)
from workspaces.services import (
    member_add,
    member_remove,
    member_set_role,
    personal_workspaces_ensure_all,
    workspace_create,
    workspace_for_writing,
    workspace_rename,
)

pytestmark = pytest.mark.django_db

PUBLIC_HOOK = "https://93.184.215.14/hook"


@pytest.fixture
def owner():
    return UserFactory(username="olive")


@pytest.fixture
def editor():
    return UserFactory(username="eddie")


@pytest.fixture
def viewer():
    return UserFactory(username="vera")


@pytest.fixture
def outsider():
    return UserFactory(username="nora")


@pytest.fixture
def team(owner, editor, viewer):
    """A team workspace: olive owns it, eddie edits, vera views."""
    workspace = workspace_create(user=owner, name="Growth team", slug="growth")
    member_add(by=owner, workspace=workspace, username="eddie", role=Role.EDITOR)
    member_add(by=owner, workspace=workspace, username="vera", role=Role.VIEWER)
    return workspace


# --- personal workspaces ----------------------------------------------------------------------


def test_a_new_user_gets_a_personal_workspace_they_own():
    user = UserFactory(username="Ada.Lovelace")
    workspace = Workspace.objects.get(personal_for=user)
    assert workspace.slug == "adalovelace"
    assert workspace.name == "Ada.Lovelace"
    assert workspace.is_personal
    assert role_in(user=user, workspace_id=workspace.pk) == Role.OWNER
    assert personal_workspace_of(user) == workspace
    assert [w.pk for w in workspaces_of(user)] == [workspace.pk]


def test_clashing_usernames_get_distinct_slugs():
    # Three usernames that slugify alike, and a team workspace that took the slug first.
    first = UserFactory(username="sam")
    workspace_create(user=first, name="Sam's team", slug="sam-2")
    second = UserFactory(username="Sam!")
    third = UserFactory(username="s.a.m")
    slugs = [personal_workspace_of(user).slug for user in (first, second, third)]
    # "--": a slug no username gives (slugify folds dashes), so no future user's own slug.
    assert slugs == ["sam", "sam--2", "sam--3"]
    assert len(set(Workspace.objects.values_list("slug", flat=True))) == Workspace.objects.count()


def _user_saved_raw(username: str):
    """A user as a fixture or a restored dump brings one: saved without post_save."""
    User = get_user_model()
    User.objects.bulk_create([User(username=username, password=make_password("s3cret-pass"))])
    return User.objects.get(username=username)


def test_a_user_saved_raw_gets_a_personal_workspace_at_sign_in(client):
    user = _user_saved_raw("restored")
    with pytest.raises(Workspace.DoesNotExist):  # the selector only reads
        personal_workspace_of(user)
    response = client.post(
        reverse("login"), {"username": "restored", "password": "s3cret-pass"}, follow=True
    )
    assert response.status_code == 200
    assert response.context["user"].is_authenticated
    assert personal_workspace_of(user).slug == "restored"
    assert client.get(reverse("home")).status_code == 200


def test_migrate_gives_every_user_without_one_a_personal_workspace():
    user = _user_saved_raw("from-a-dump")
    call_command("migrate", verbosity=0)
    workspace = personal_workspace_of(user)
    assert role_in(user=user, workspace_id=workspace.pk) == Role.OWNER
    assert personal_workspaces_ensure_all() == 0  # nothing left to make


def test_workspaces_of_lists_the_personal_one_first_with_the_role(owner, team):
    listed = workspaces_of(owner)
    assert [w.slug for w in listed] == ["olive", "growth"]
    assert [w.role for w in listed] == [Role.OWNER, Role.OWNER]
    vera = UserFactory._meta.model.objects.get(username="vera")
    assert [(w.slug, w.role) for w in workspaces_of(vera)] == [
        ("vera", Role.OWNER),
        ("growth", Role.VIEWER),
    ]


# --- creating and renaming --------------------------------------------------------------------


def test_workspace_create_makes_the_creator_owner_and_picks_a_slug_from_the_name(owner):
    workspace = workspace_create(user=owner, name="  Spring Campaign  ")
    assert (workspace.name, workspace.slug, workspace.is_personal) == (
        "Spring Campaign",
        "spring-campaign",
        False,
    )
    assert workspace.role == Role.OWNER
    assert role_in(user=owner, workspace_id=workspace.pk) == Role.OWNER
    again = workspace_create(user=owner, name="Spring campaign")
    assert again.slug == "spring-campaign-2"


@pytest.mark.parametrize(
    ("name", "slug", "field"),
    [
        ("", "", "name"),
        ("   ", "ok-slug", "name"),
        ("x" * 101, "", "name"),
        ("Team", "has space", "slug"),
        ("Team", "ünïcode", "slug"),
        ("Team", "s" * 51, "slug"),
    ],
)
def test_workspace_create_refuses_bad_names_and_slugs(owner, name, slug, field):
    with pytest.raises(ValidationError) as refused:
        workspace_create(user=owner, name=name, slug=slug)
    assert field in refused.value.message_dict
    assert not Workspace.objects.filter(personal_for__isnull=True).exists()


def test_a_taken_slug_is_refused_whatever_its_case(owner, outsider):
    workspace_create(user=owner, name="Growth", slug="growth")
    with pytest.raises(ValidationError) as refused:
        workspace_create(user=outsider, name="Other growth", slug="Growth")
    assert "taken" in refused.value.message_dict["slug"][0]
    # A user's personal slug is taken too.
    with pytest.raises(ValidationError):
        workspace_create(user=outsider, name="Impostor", slug="olive")


def test_only_owners_rename(team, owner, editor):
    assert workspace_rename(by=owner, workspace=team, name="Growth & Retention").name == (
        "Growth & Retention"
    )
    with pytest.raises(PermissionDenied):
        workspace_rename(by=editor, workspace=team, name="Mine now")
    with pytest.raises(ValidationError):
        workspace_rename(by=owner, workspace=team, name=" ")


# --- members ----------------------------------------------------------------------------------


def test_members_are_added_by_username_or_email(team, owner, outsider):
    member_add(by=owner, workspace=team, username="NORA@example.com", role=Role.VIEWER)
    assert role_in(user=outsider, workspace_id=team.pk) == Role.VIEWER
    assert [(m.user.username, m.role) for m in members_of(team)] == [
        ("olive", Role.OWNER),
        ("eddie", Role.EDITOR),
        ("nora", Role.VIEWER),
        ("vera", Role.VIEWER),
    ]


def test_adding_an_existing_member_changes_their_role(team, owner, viewer):
    member_add(by=owner, workspace=team, username="vera", role=Role.EDITOR)
    assert role_in(user=viewer, workspace_id=team.pk) == Role.EDITOR
    assert Membership.objects.filter(workspace=team, user=viewer).count() == 1


@pytest.mark.parametrize(
    ("username", "role", "field"),
    [("nobody", Role.VIEWER, "user"), ("nora", "admin", "role"), ("", Role.VIEWER, "user")],
)
def test_an_unknown_user_or_role_is_refused(team, owner, outsider, username, role, field):
    with pytest.raises(ValidationError) as refused:
        member_add(by=owner, workspace=team, username=username, role=role)
    assert field in refused.value.message_dict


def test_roles_change(team, owner, editor):
    member_set_role(by=owner, workspace=team, username="eddie", role=Role.OWNER)
    assert role_in(user=editor, workspace_id=team.pk) == Role.OWNER
    # Now the old owner may step down: another owner remains.
    member_set_role(by=editor, workspace=team, username="olive", role=Role.VIEWER)
    assert role_in(user=owner, workspace_id=team.pk) == Role.VIEWER
    # olive is a viewer now: she may not manage at all.
    with pytest.raises(PermissionDenied):
        member_set_role(by=owner, workspace=team, username="eddie", role=Role.EDITOR)
    assert role_in(user=editor, workspace_id=team.pk) == Role.OWNER


def test_the_last_owner_stays(team, owner):
    with pytest.raises(ValidationError) as demoted:
        member_set_role(by=owner, workspace=team, username="olive", role=Role.EDITOR)
    assert "at least one owner" in demoted.value.message_dict["user"][0]
    with pytest.raises(ValidationError) as left:
        member_remove(by=owner, workspace=team, username="olive")
    assert "at least one owner" in left.value.message_dict["user"][0]
    assert role_in(user=owner, workspace_id=team.pk) == Role.OWNER


def test_a_personal_workspaces_user_stays_its_owner(owner, editor):
    personal = personal_workspace_of(owner)
    member_add(by=owner, workspace=personal, username="eddie", role=Role.OWNER)
    # Even another owner cannot demote or remove the personal workspace's own user.
    with pytest.raises(ValidationError, match="stays its owner"):
        member_set_role(by=editor, workspace=personal, username="olive", role=Role.VIEWER)
    with pytest.raises(ValidationError, match="stays its owner"):
        member_remove(by=editor, workspace=personal, username="olive")
    with pytest.raises(ValidationError, match="stays its owner"):
        member_remove(by=owner, workspace=personal, username="olive")
    assert role_in(user=owner, workspace_id=personal.pk) == Role.OWNER


def test_members_may_leave_and_owners_remove(team, owner, editor, viewer):
    member_remove(by=viewer, workspace=team, username="vera")
    assert role_in(user=viewer, workspace_id=team.pk) is None
    member_remove(by=owner, workspace=team, username="eddie")
    assert role_in(user=editor, workspace_id=team.pk) is None
    with pytest.raises(ValidationError, match="not a member"):
        member_remove(by=owner, workspace=team, username="eddie")


def test_non_owners_cannot_manage_members(team, editor, viewer, outsider):
    for by in (editor, viewer, outsider):
        with pytest.raises(PermissionDenied):
            member_add(by=by, workspace=team, username="nora", role=Role.EDITOR)
        with pytest.raises(PermissionDenied):
            member_set_role(by=by, workspace=team, username="vera", role=Role.EDITOR)
    with pytest.raises(PermissionDenied):
        member_remove(by=editor, workspace=team, username="vera")
    assert role_in(user=outsider, workspace_id=team.pk) is None
    assert role_in(user=viewer, workspace_id=team.pk) == Role.VIEWER


def test_staff_with_the_change_permission_manage_any_workspace(team, outsider):
    staff = UserFactory(username="root", staff=True)
    member_add(by=staff, workspace=team, username="nora", role=Role.EDITOR)
    assert role_in(user=outsider, workspace_id=team.pk) == Role.EDITOR


# --- selectors --------------------------------------------------------------------------------


def test_workspace_get_finds_members_workspaces_only(team, viewer, outsider):
    assert workspace_get(user=viewer, slug=" Growth ").role == Role.VIEWER
    with pytest.raises(WorkspaceNotFound):
        workspace_get(user=outsider, slug="growth")
    with pytest.raises(WorkspaceNotFound):
        workspace_get(user=viewer, slug="no-such")
    staff = UserFactory(username="root", staff=True)
    assert workspace_get(user=staff, slug="growth").role is None


def test_can_write_is_owners_and_editors(team, owner, editor, viewer, outsider):
    assert [can_write(user=u, workspace_id=team.pk) for u in (owner, editor, viewer, outsider)] == [
        True,
        True,
        False,
        False,
    ]


def test_pinned_workspace_id_is_an_api_keys_own(owner, team):
    key, _ = api_key_create(user=owner, name="team tool", workspace="growth")
    assert pinned_workspace_id(key) == team.pk
    personal_key, _ = api_key_create(user=owner, name="mine")
    assert pinned_workspace_id(personal_key) == personal_workspace_of(owner).pk
    assert pinned_workspace_id(None) is None
    assert pinned_workspace_id(object()) is None  # a DRF token has no workspace


# --- the rule: where a write lands and who may write ------------------------------------------


def test_workspace_for_writing(team, owner, editor, viewer, outsider):
    assert workspace_for_writing(user=editor, workspace=None) == personal_workspace_of(editor)
    assert workspace_for_writing(user=editor, workspace="growth") == team
    assert workspace_for_writing(user=owner, workspace=team) == team
    with pytest.raises(PermissionDenied):
        workspace_for_writing(user=viewer, workspace="growth")
    with pytest.raises(PermissionDenied):
        workspace_for_writing(user=viewer, workspace=team)
    # A non-member is told nothing apart from a slug that does not exist.
    for slug in ("growth", "no-such"):
        with pytest.raises(ValidationError) as refused:
            workspace_for_writing(user=outsider, workspace=slug)
        assert refused.value.message_dict["workspace"] == [
            f"No workspace {slug!r} that you belong to."
        ]
    # A Workspace object is checked as a slug is.
    with pytest.raises(PermissionDenied):
        workspace_for_writing(user=outsider, workspace=team)


def test_a_pinned_key_writes_to_its_workspace_only(team, editor):
    personal = personal_workspace_of(editor)
    assert workspace_for_writing(user=editor, workspace=None, pinned_id=team.pk) == team
    assert workspace_for_writing(user=editor, workspace="growth", pinned_id=team.pk) == team
    with pytest.raises(ValidationError, match="another workspace"):
        workspace_for_writing(user=editor, workspace=personal.slug, pinned_id=team.pk)
    with pytest.raises(ValidationError, match="another workspace"):
        workspace_for_writing(user=editor, workspace="growth", pinned_id=personal.pk)


def test_a_pinned_key_of_a_member_demoted_to_viewer_stops_writing(team, owner, editor):
    workspace_for_writing(user=editor, workspace=None, pinned_id=team.pk)
    member_set_role(by=owner, workspace=team, username="eddie", role=Role.VIEWER)
    with pytest.raises(PermissionDenied):
        workspace_for_writing(user=editor, workspace=None, pinned_id=team.pk)


# --- links in a team workspace ------------------------------------------------------------------


def test_a_team_link_is_seen_by_members_and_changed_by_writers(
    team, owner, editor, viewer, outsider
):
    link = link_create(
        user=editor, long_url="https://example.com/team", alias="team-link", workspace="growth"
    ).link
    assert (link.workspace_id, link.owner_id) == (team.pk, editor.pk)
    staff = UserFactory(username="root", staff=True)

    for user in (owner, editor, viewer, staff):
        assert link_get_visible(code="team-link", user=user).pk == link.pk
    with pytest.raises(LinkNotFound):
        link_get_visible(code="team-link", user=outsider)

    for user in (owner, editor, staff):
        assert link_get_changeable(code="team-link", user=user).pk == link.pk
    with pytest.raises(PermissionDenied):
        link_get_changeable(code="team-link", user=viewer)
    with pytest.raises(LinkNotFound):
        link_get_changeable(code="team-link", user=outsider)

    # Lists: every member's list holds it; one workspace's list narrows to it.
    for user in (owner, editor, viewer):
        assert list(link_list(user=user)) == [link]
        assert list(link_list(user=user, workspace_id=team.pk)) == [link]
        assert not link_list(user=user, workspace_id=personal_workspace_of(user).pk).exists()
    assert not link_list(user=outsider).exists()
    assert list(link_list(user=staff, owned_only=False)) == [link]
    assert list(link_list(user=staff, workspace_id=team.pk)) == [link]
    assert not link_list(user=staff).exists()  # staff's own list: their workspaces only


def test_viewers_and_outsiders_cannot_create_team_links(team, viewer, outsider):
    with pytest.raises(PermissionDenied):
        link_create(user=viewer, long_url="https://example.com/v", workspace="growth")
    with pytest.raises(ValidationError) as refused:
        link_create(user=outsider, long_url="https://example.com/o", workspace="growth")
    assert "workspace" in refused.value.message_dict
    assert not team.links.exists()


def test_a_pinned_key_sees_its_workspaces_links_only(team, editor):
    team_link = link_create(
        user=editor, long_url="https://example.com/t", alias="pinned-t", workspace=team
    ).link
    own = link_create(user=editor, long_url="https://example.com/p", alias="pinned-p").link
    personal = personal_workspace_of(editor)
    assert own.workspace_id == personal.pk
    with pytest.raises(LinkNotFound):
        link_get_visible(code="pinned-t", user=editor, workspace_id=personal.pk)
    assert link_get_visible(code="pinned-t", user=editor, workspace_id=team.pk) == team_link
    assert list(link_list(user=editor, workspace_id=personal.pk)) == [own]


def test_a_plain_create_is_reused_within_a_workspace_not_across(team, editor):
    url = "https://example.com/same"
    personal = link_create(user=editor, long_url=url)
    in_team = link_create(user=editor, long_url=url, workspace="growth")
    assert in_team.link.pk != personal.link.pk
    assert link_create(user=editor, long_url=url, workspace="growth").link.pk == in_team.link.pk


def test_leaving_a_workspace_hides_its_links(team, editor, viewer):
    link_create(user=editor, long_url="https://example.com/l", alias="left", workspace=team)
    member_remove(by=viewer, workspace=team, username="vera")
    with pytest.raises(LinkNotFound):
        link_get_visible(code="left", user=viewer)


# --- tags, webhooks and domains follow the workspace --------------------------------------------


def test_tags_belong_to_the_workspace(team, owner, editor):
    mine = link_create(user=owner, long_url="https://example.com/a", tags=["Launch"]).link
    theirs = link_create(
        user=editor, long_url="https://example.com/b", tags=["launch"], workspace="growth"
    ).link
    again = link_create(
        user=owner, long_url="https://example.com/c", tags=["LAUNCH"], workspace="growth"
    ).link
    personal_tag = mine.tags.get()
    team_tag = theirs.tags.get()
    assert personal_tag.pk != team_tag.pk
    assert (personal_tag.workspace_id, team_tag.workspace_id) == (
        personal_workspace_of(owner).pk,
        team.pk,
    )
    # Another member's link in the team reuses the team's tag, as first spelt.
    assert again.tags.get() == team_tag
    assert team_tag.name == "launch"
    assert Tag.objects.filter(key="launch").count() == 2


def test_webhooks_hear_their_workspaces_links_only(team, owner, editor):
    team_hook = webhook_create(
        user=owner, url=PUBLIC_HOOK, events=["link.created"], workspace="growth"
    )
    personal_hook = webhook_create(user=editor, url=PUBLIC_HOOK, events=["link.created"])
    assert team_hook.workspace_id == team.pk
    assert personal_hook.workspace_id == personal_workspace_of(editor).pk
    assert webhooks_hearing(event="link.created", workspace_ids=[team.pk]) == {team.pk: [team_hook]}
    editor_personal = personal_workspace_of(editor).pk
    assert webhooks_hearing(event="link.created", workspace_ids=[editor_personal]) == {
        editor_personal: [personal_hook]
    }
    assert webhooks_hearing(event="link.revoked", workspace_ids=[team.pk]) == {}
    assert webhooks_hearing(event="link.created", workspace_ids=[]) == {}


def test_viewers_cannot_make_webhooks(team, viewer):
    with pytest.raises(PermissionDenied):
        webhook_create(user=viewer, url=PUBLIC_HOOK, events=["link.created"], workspace="growth")


@pytest.mark.django_db(transaction=True)
def test_a_domain_kept_for_one_workspace_refuses_anothers_links(team, editor, outsider):
    kept = domain_save(host="team.example.test", workspace=team)
    free = domain_save(host="free.example.test")

    in_team = link_create(
        user=editor, long_url="https://example.com/k", domain="team.example.test", workspace=team
    ).link
    assert in_team.domain_id == kept.pk
    for user, workspace in ((editor, None), (outsider, None)):
        with pytest.raises(ValidationError) as refused:
            link_create(
                user=user,
                long_url="https://example.com/x",
                domain="team.example.test",
                workspace=workspace,
            )
        assert "kept for another workspace" in refused.value.message_dict["domain"][0]
    # A domain kept for nobody takes every workspace's links.
    assert (
        link_create(
            user=outsider, long_url="https://example.com/f", domain="free.example.test"
        ).link.domain_id
        == free.pk
    )


@pytest.mark.django_db(transaction=True)
def test_a_domains_workspace_is_kept_until_it_is_named_again(team):
    kept = domain_save(host="kept.example.test", workspace=team)
    # Changing the redirects alone leaves the workspace as it was.
    changed = domain_save(domain=kept, host=kept.host, root_redirect="https://www.example.com/home")
    assert Domain.objects.get(pk=changed.pk).workspace_id == team.pk
    freed = domain_save(domain=changed, host=kept.host, workspace=None)
    assert Domain.objects.get(pk=freed.pk).workspace_id is None
    default = Domain.objects.get(pk=DEFAULT_DOMAIN_ID)
    with pytest.raises(ValidationError) as refused:
        domain_save(domain=default, host="", workspace=team)
    assert "workspace" in refused.value.message_dict


@pytest.mark.django_db(transaction=True)
def test_a_domain_other_workspaces_links_use_cannot_be_kept_for_one(team, outsider):
    shared = domain_save(host="shared.example.test")
    link_create(user=outsider, long_url="https://example.com/o", domain="shared.example.test")
    with pytest.raises(ValidationError) as refused:
        domain_save(domain=shared, host=shared.host, workspace=team)
    assert "1 link of other workspaces" in refused.value.message_dict["workspace"][0]
    assert Domain.objects.get(pk=shared.pk).workspace_id is None


@pytest.mark.django_db(transaction=True)
def test_the_domains_command_keeps_a_domain_for_a_workspace(team, capsys):
    call_command("domains", "add", "cmd.example.test", "--workspace", "Growth")
    assert Domain.objects.get(host="cmd.example.test").workspace_id == team.pk
    call_command("domains", "set", "cmd.example.test", "--root-redirect", "https://example.com/")
    assert Domain.objects.get(host="cmd.example.test").workspace_id == team.pk
    call_command("domains", "list")
    listed = capsys.readouterr().out
    assert "cmd.example.test: 0 link(s)" in listed
    assert "kept for growth" in listed
    call_command("domains", "set", "cmd.example.test", "--workspace", "")
    assert Domain.objects.get(host="cmd.example.test").workspace_id is None
    with pytest.raises(CommandError, match="no workspace"):
        call_command("domains", "set", "cmd.example.test", "--workspace", "no-such")


@pytest.mark.django_db(transaction=True)
def test_staff_keep_a_domain_for_a_workspace_in_the_admin(client, team):
    staff = UserFactory(username="root", staff=True)
    client.force_login(staff)
    added = client.post(
        "/admin/links/domain/add/",
        {
            "host": "admin.example.test",
            "root_redirect": "",
            "not_found_redirect": "",
            "workspace": team.pk,
        },
    )
    assert added.status_code == 302, added.content[:2000]
    domain = Domain.objects.get(host="admin.example.test")
    assert domain.workspace_id == team.pk
    listed = client.get("/admin/links/domain/")
    assert "Growth team" in listed.content.decode()
    # The default domain's form has no workspace, and saving it leaves it every workspace's.
    saved = client.post(
        f"/admin/links/domain/{DEFAULT_DOMAIN_ID}/change/", {"not_found_redirect": ""}
    )
    assert saved.status_code == 302
    assert Domain.objects.get(pk=DEFAULT_DOMAIN_ID).workspace_id is None
