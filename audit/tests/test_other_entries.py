"""Domains, tags, API keys, webhooks, workspaces and memberships: each change leaves one entry,
secrets masked, in the workspace it belongs to."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from accounts.services import api_key_create, api_key_revoke, api_key_set_rate_limit
from audit.channels import acting_through
from audit.models import AuditEntry
from audit.services import MASK
from links.services.create import link_create
from links.services.domains import domain_delete, domain_save
from links.services.tags import tag_delete, tag_rename
from webhooks.services import webhook_create, webhook_delete, webhook_update
from workspaces.models import Membership
from workspaces.services import (
    member_add,
    member_remove,
    member_set_role,
    workspace_create,
    workspace_rename,
    workspace_set_api_rate_limit,
    workspace_set_privacy,
    workspace_set_retention,
)

pytestmark = pytest.mark.django_db


def _log(object_type: str) -> list[tuple[str, dict]]:
    rows = AuditEntry.objects.filter(object_type=object_type).order_by("pk")
    return [(entry.action, entry.changes) for entry in rows]


def test_domains_added_changed_and_removed():
    with acting_through("admin"):
        domain = domain_save(host="go.example.org")
        domain_save(domain=domain, host="go.example.org", root_redirect="https://example.org/")
        domain_delete(domain=domain)

    log = _log("domain")
    assert [action for action, _ in log] == ["domain.create", "domain.update", "domain.delete"]
    assert log[0][1]["host"] == [None, "go.example.org"]
    assert log[1][1] == {"root_redirect": ["", "https://example.org/"]}
    assert log[2][1]["host"] == ["go.example.org", None]
    assert set(AuditEntry.objects.values_list("channel", flat=True)) == {"admin"}


def test_tags_renamed_and_deleted_in_their_workspace(user):
    link = link_create(user=user, long_url="https://example.com/", tags=["spring"]).link

    tag_rename(user=user, workspace_id=None, tag="spring", new_name="Summer")
    tag_delete(user=user, workspace_id=None, tag="summer")

    assert _log("tag") == [
        ("tag.update", {"name": ["spring", "Summer"]}),
        ("tag.delete", {"name": ["Summer", None]}),
    ]
    entry = AuditEntry.objects.filter(object_type="tag").first()
    assert (entry.workspace_id, entry.actor) == (link.workspace_id, "marketer")


def test_api_keys_made_and_revoked_never_show_the_key(user):
    api_key, raw_key = api_key_create(user=user, name="CI")
    api_key_set_rate_limit(key_id=api_key.pk, user=user, rate_limit=10)
    api_key_revoke(key_id=api_key.pk, user=user)

    log = _log("api_key")
    assert [action for action, _ in log] == ["api_key.create", "api_key.update", "api_key.revoke"]
    assert log[0][1]["key_hash"] == [None, MASK]
    assert log[0][1]["name"] == [None, "CI"]
    assert log[1][1] == {"rate_limit": [None, 10]}
    assert list(log[2][1]) == ["revoked_at"]
    everything = str(list(AuditEntry.objects.values_list("changes", flat=True)))
    assert raw_key not in everything and api_key.key_hash not in everything


def test_webhooks_made_changed_and_deleted_never_show_the_secret(user, settings):
    settings.SHORTURL_WEBHOOK_ALLOW_PRIVATE = True
    webhook = webhook_create(user=user, url="http://127.0.0.1:9/in", events=["link.created"])
    webhook_update(user=user, webhook_id=webhook.pk, is_active=False)
    webhook_delete(user=user, webhook_id=webhook.pk)

    log = _log("webhook")
    assert [action for action, _ in log] == ["webhook.create", "webhook.update", "webhook.delete"]
    assert log[0][1]["secret"] == [None, MASK]
    assert log[1][1] == {"is_active": [True, False]}
    assert webhook.secret not in str(log)


def test_workspaces_and_memberships(user, other_user):
    team = workspace_create(user=user, name="Team")
    workspace_rename(by=user, workspace=team, name="The team")
    workspace_set_retention(by=user, workspace=team, days=30)
    workspace_set_api_rate_limit(by=user, workspace=team, api_rate_limit=120)
    workspace_set_privacy(by=user, workspace=team, privacy="none")
    member_add(by=user, workspace=team, username="rival", role="viewer")
    member_set_role(by=user, workspace=team, username="rival", role="editor")
    member_remove(by=user, workspace=team, username="rival")

    rows = AuditEntry.objects.filter(workspace_id=team.pk).order_by("pk")
    assert [(e.action, e.actor) for e in rows] == [
        ("workspace.create", "marketer"),
        ("membership.create", "marketer"),
        ("workspace.update", "marketer"),
        ("workspace.update", "marketer"),
        ("workspace.update", "marketer"),
        ("workspace.update", "marketer"),
        ("membership.create", "marketer"),
        ("membership.update", "marketer"),
        ("membership.delete", "marketer"),
    ]
    assert rows[2].changes == {"name": ["Team", "The team"]}
    assert rows[3].changes == {"raw_retention_days": [None, 30]}
    assert rows[4].changes == {"api_rate_limit": [None, 120]}
    assert rows[5].changes == {"analytics_privacy": ["", "none"]}
    assert rows[6].changes["role"] == [None, "viewer"]
    assert rows[7].changes == {"role": ["viewer", "editor"]}
    assert rows[8].changes["role"] == ["editor", None]


def test_a_token_made_by_the_command_is_recorded_without_its_value(user):
    out = StringIO()
    call_command("drf_create_token", user.username, stdout=out)

    (entry,) = AuditEntry.objects.filter(action="api_key.create")
    assert (entry.channel, entry.actor, entry.workspace_id) == ("command", "marketer", None)
    assert entry.changes["key_hash"] == [None, MASK]
    assert out.getvalue().split()[2] not in str(entry.changes)


def test_staff_changing_a_workspace_and_its_members_in_the_admin(admin_client, user, other_user):
    team = workspace_create(user=user, name="Team")
    member_add(by=user, workspace=team, username="rival", role="viewer")
    owner, viewer = (
        Membership.objects.get(workspace=team, user=user),
        Membership.objects.get(workspace=team, user=other_user),
    )
    prefix = "memberships"
    response = admin_client.post(
        reverse("admin:workspaces_workspace_change", args=[team.pk]),
        {
            "slug": team.slug,
            "name": "Team renamed",
            f"{prefix}-TOTAL_FORMS": "2",
            f"{prefix}-INITIAL_FORMS": "2",
            f"{prefix}-MIN_NUM_FORMS": "0",
            f"{prefix}-MAX_NUM_FORMS": "1000",
            f"{prefix}-0-id": str(owner.pk),
            f"{prefix}-0-workspace": str(team.pk),
            f"{prefix}-0-user": str(user.pk),
            f"{prefix}-0-role": "owner",
            f"{prefix}-1-id": str(viewer.pk),
            f"{prefix}-1-workspace": str(team.pk),
            f"{prefix}-1-user": str(other_user.pk),
            f"{prefix}-1-role": "viewer",
            f"{prefix}-1-DELETE": "on",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]

    rows = AuditEntry.objects.filter(workspace_id=team.pk, channel="admin").order_by("pk")
    assert [(e.action, e.actor) for e in rows] == [
        ("workspace.update", "staffer"),
        ("membership.delete", "staffer"),
    ]
    assert rows[0].changes == {"name": ["Team", "Team renamed"]}
    assert rows[1].changes["role"] == ["viewer", None]
    assert rows[1].object_id == str(viewer.pk)


def test_staff_revoking_a_key_in_the_admin_are_its_actor(admin_client, user):
    api_key, _ = api_key_create(user=user, name="CI")
    response = admin_client.post(
        reverse("admin:accounts_apikey_changelist"),
        {"action": "revoke", "_selected_action": [str(api_key.pk)]},
    )
    assert response.status_code == 302

    entry = AuditEntry.objects.get(action="api_key.revoke")
    assert (entry.actor, entry.channel) == ("staffer", "admin")
