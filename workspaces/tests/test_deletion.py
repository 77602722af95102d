"""Deleting a user keeps what they made in team workspaces: it passes to another member."""

from __future__ import annotations

import pytest
from django.urls import reverse

from links.models import UrlLink
from links.services.create import link_create
from links.tests.factories import UserFactory
from webhooks.models import Webhook
from webhooks.services import webhook_create
from workspaces.models import Membership, Role
from workspaces.services import member_add, workspace_create

pytestmark = pytest.mark.django_db

PUBLIC_HOOK = "https://93.184.215.14/hook"


def _role(workspace, user) -> str | None:
    return (
        Membership.objects.filter(workspace=workspace, user=user)
        .values_list("role", flat=True)
        .first()
    )


# Transactional: the delete runs in autocommit, as a shell's `user.delete()` does.
@pytest.mark.django_db(transaction=True)
def test_a_deleted_owners_team_links_and_webhooks_pass_to_the_longest_standing_editor(client):
    leaving, editor, later_editor, viewer = (
        UserFactory(username=name) for name in ("lea", "ed", "eve", "vic")
    )
    team = workspace_create(user=leaving, name="Launch", slug="launch")
    member_add(by=leaving, workspace=team, username="vic", role=Role.VIEWER)
    member_add(by=leaving, workspace=team, username="ed", role=Role.EDITOR)
    member_add(by=leaving, workspace=team, username="eve", role=Role.EDITOR)
    team_link = link_create(user=leaving, workspace=team, long_url="https://ex.com/launch").link
    hook = webhook_create(user=leaving, workspace=team, url=PUBLIC_HOOK, events=["link.created"])
    own_link = link_create(user=leaving, long_url="https://ex.com/mine").link

    leaving.delete()

    kept = UrlLink.objects.get(pk=team_link.pk)
    assert kept.owner == editor and kept.workspace == team
    assert Webhook.objects.get(pk=hook.pk).owner == editor
    # The workspace keeps an owner: the editor who joined first.
    assert (_role(team, editor), _role(team, later_editor), _role(team, viewer)) == (
        Role.OWNER,
        Role.EDITOR,
        Role.VIEWER,
    )
    # The personal workspace and its links go with the user.
    assert not UrlLink.objects.filter(pk=own_link.pk).exists()
    # Seen from outside: the team's link still redirects and its page opens for the new owner.
    assert client.get(f"/{kept.code}").status_code == 302
    client.force_login(editor)
    assert client.get(reverse("link_stats", args=[kept.code])).status_code == 200


def test_another_owner_takes_over_and_nobody_is_promoted():
    leaving, owner, editor = (UserFactory(username=name) for name in ("lee", "ola", "edd"))
    team = workspace_create(user=owner, name="Brand", slug="brand")
    member_add(by=owner, workspace=team, username="edd", role=Role.EDITOR)
    member_add(by=owner, workspace=team, username="lee", role=Role.EDITOR)
    link = link_create(user=leaving, workspace=team, long_url="https://ex.com/brand").link

    leaving.delete()

    assert UrlLink.objects.get(pk=link.pk).owner == owner
    assert (_role(team, owner), _role(team, editor)) == (Role.OWNER, Role.EDITOR)


def test_a_team_of_one_goes_with_its_user():
    alone = UserFactory(username="solo")
    team = workspace_create(user=alone, name="Side project", slug="side")
    link = link_create(user=alone, workspace=team, long_url="https://ex.com/side").link

    alone.delete()

    assert not UrlLink.objects.filter(pk=link.pk).exists()


def test_the_admins_are_you_sure_page_changes_nothing_and_its_delete_hands_over(admin_client):
    leaving, editor = UserFactory(username="lou"), UserFactory(username="edna")
    team = workspace_create(user=leaving, name="Events", slug="events")
    member_add(by=leaving, workspace=team, username="edna", role=Role.EDITOR)
    link = link_create(user=leaving, workspace=team, long_url="https://ex.com/events").link
    page = admin_client.get(f"/admin/auth/user/{leaving.pk}/delete/")
    assert page.status_code == 200
    assert _role(team, editor) == Role.EDITOR  # only asked: nobody promoted yet
    assert (
        admin_client.post(f"/admin/auth/user/{leaving.pk}/delete/", {"post": "yes"}).status_code
        == 302
    )
    assert UrlLink.objects.get(pk=link.pk).owner == editor
    assert _role(team, editor) == Role.OWNER
