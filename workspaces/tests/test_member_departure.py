"""Security round 3, finding 4: a member who leaves a workspace, is made a viewer there, or whose
account is deleted keeps no feed of it and nothing acting in it. Their webhooks there are turned
off with the reason (shown to the owners, never re-pointed), and send nothing more; their API keys
for it stop; their imports into it stop with the reason."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import api_key_create
from links.imports import service as imports
from links.models import ImportStatus, LinkImport, UrlLink
from links.services.create import link_create
from links.tests.factories import UserFactory
from webhooks import services as webhook_services
from webhooks.models import DeliveryStatus, Webhook, WebhookDelivery
from workspaces.current import SESSION_KEY
from workspaces.models import Membership, Role
from workspaces.services import member_remove, member_set_role

pytestmark = pytest.mark.django_db

HOOK = "https://93.184.215.14/editor-feed"
EVENTS = ["link.created", "link.clicked"]


def _editors_hook(team) -> Webhook:
    return webhook_services.webhook_create(
        user=team.editor, workspace=team.workspace, url=HOOK, events=EVENTS
    )


def _new_team_link(team, n: int) -> None:
    link_create(user=team.owner, workspace=team.workspace, long_url=f"https://ex.com/after/{n}")


def _heard(webhook: Webhook) -> int:
    """Deliveries of the hook that could still go out (made, and not failed)."""
    return WebhookDelivery.objects.filter(webhook=webhook).exclude(status="failed").count()


@pytest.mark.parametrize(
    ("depart", "reason"),
    [
        (
            lambda team: member_remove(
                by=team.owner, workspace=team.workspace, username=team.editor.username
            ),
            "Turned off: its maker ed left the workspace or was removed from it.",
        ),
        (
            lambda team: member_remove(
                by=team.editor, workspace=team.workspace, username=team.editor.username
            ),
            "Turned off: its maker ed left the workspace or was removed from it.",
        ),
        (
            lambda team: member_set_role(
                by=team.owner,
                workspace=team.workspace,
                username=team.editor.username,
                role=Role.VIEWER,
            ),
            "Turned off: its maker ed is no longer an owner or editor of the workspace.",
        ),
        (
            lambda team: team.editor.delete(),
            "Turned off: the account of its maker ed was deleted.",
        ),
    ],
    ids=["removed", "left", "made-viewer", "account-deleted"],
)
def test_a_departed_members_webhook_hears_nothing_more_and_the_owners_see_why(
    team, client, django_capture_on_commit_callbacks, depart, reason
):
    hook = _editors_hook(team)
    with django_capture_on_commit_callbacks(execute=True):
        _new_team_link(team, 0)
    assert _heard(hook) == 1  # heard while a member; not yet sent

    depart(team)
    with django_capture_on_commit_callbacks(execute=True):
        _new_team_link(team, 1)

    hook = Webhook.objects.get(pk=hook.pk)
    assert hook.url == HOOK  # never re-pointed
    assert hook.is_active is False and hook.disabled_reason == reason
    assert _heard(hook) == 0  # the pending one failed with the reason; nothing new
    assert set(WebhookDelivery.objects.filter(webhook=hook).values_list("error", flat=True)) == {
        reason
    }
    assert webhook_services.webhook_deliver_due() == 0  # nothing goes out

    # The owners see it, and why, on the page and in the API.
    client.force_login(team.owner)
    session = client.session
    session[SESSION_KEY] = team.workspace.slug
    session.save()
    assert reason in client.get(reverse("webhooks")).text
    api = APIClient()
    api.force_authenticate(team.owner)
    [shown] = api.get("/api/v1/webhooks/", {"workspace": team.workspace.slug}).json()
    assert (shown["is_active"], shown["disabled_reason"], shown["url"]) == (False, reason, HOOK)


def test_a_membership_deleted_by_another_path_still_stops_the_feed(
    team, django_capture_on_commit_callbacks
):
    """The admin deletes membership rows without the services: the webhook hears nothing new,
    and what was pending is not sent (the webhook is turned off when it comes due)."""
    hook = _editors_hook(team)
    with django_capture_on_commit_callbacks(execute=True):
        _new_team_link(team, 0)
    Membership.objects.filter(workspace=team.workspace, user=team.editor).delete()
    with django_capture_on_commit_callbacks(execute=True):
        _new_team_link(team, 1)
    assert WebhookDelivery.objects.filter(webhook=hook).count() == 1  # nothing new
    assert webhook_services.webhook_deliver_due() == 1  # the pending one: failed, not sent
    delivery = WebhookDelivery.objects.get(webhook=hook)
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.FAILED, 0)
    hook.refresh_from_db()
    assert hook.is_active is False and "no longer an owner or editor" in hook.disabled_reason


def test_an_owner_who_turns_a_departed_members_webhook_on_takes_it_over(
    team, django_capture_on_commit_callbacks
):
    hook = _editors_hook(team)
    member_remove(by=team.owner, workspace=team.workspace, username=team.editor.username)
    webhook_services.webhook_update(user=team.owner, webhook_id=hook.pk, is_active=True)
    hook.refresh_from_db()
    assert (hook.owner, hook.is_active, hook.disabled_reason) == (team.owner, True, "")
    with django_capture_on_commit_callbacks(execute=True):
        _new_team_link(team, 2)
    assert _heard(hook) == 1  # theirs now: it hears the team's links again


def test_a_removed_members_api_key_for_the_workspace_stops(team):
    key, raw = api_key_create(user=team.editor, name="ci", workspace=team.workspace)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    assert api.get("/api/v1/links/").status_code == 200

    member_remove(by=team.owner, workspace=team.workspace, username=team.editor.username)
    assert api.get("/api/v1/links/").status_code == 401
    assert api.post("/api/v1/links/", {"long_url": "https://ex.com/k"}).status_code == 401
    key.refresh_from_db()
    assert key.revoked_at is not None  # and the keys page says it is revoked


def test_an_api_key_stops_when_the_membership_goes_by_any_path(team):
    _, raw = api_key_create(user=team.editor, name="ci", workspace=team.workspace)
    Membership.objects.filter(workspace=team.workspace, user=team.editor).delete()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    assert api.get("/api/v1/links/").status_code == 401


PLAIN_CSV = b"url,alias\nhttps://ex.com/i/1,imp-one\nhttps://ex.com/i/2,imp-two\n"


def test_a_removed_members_waiting_import_fails_with_the_reason(team):
    job = imports.link_import_queue(
        user=team.editor, file_name="links.csv", data=PLAIN_CSV, workspace=team.workspace
    )
    member_remove(by=team.owner, workspace=team.workspace, username=team.editor.username)
    job.refresh_from_db()
    assert job.status == ImportStatus.FAILED and job.error == imports.DEPARTED_UPLOADER
    assert imports.link_import_run(import_id=job.pk) is False
    assert not UrlLink.objects.filter(code__in=["imp-one", "imp-two"]).exists()


def test_a_removed_members_running_import_stops_before_its_next_batch(team, monkeypatch):
    job = imports.link_import_queue(
        user=team.editor, file_name="links.csv", data=PLAIN_CSV, workspace=team.workspace
    )
    monkeypatch.setattr(imports, "BULK_MAX_ITEMS", 1)  # one row per batch
    real_import = imports.link_import

    def import_then_remove_after_the_first_batch(**kwargs):
        progress = kwargs["progress"]

        def progress_and_remove(done, total):
            if done == 1:
                member_remove(
                    by=team.owner, workspace=team.workspace, username=team.editor.username
                )
            progress(done, total)

        return real_import(**{**kwargs, "progress": progress_and_remove})

    monkeypatch.setattr(imports, "link_import", import_then_remove_after_the_first_batch)
    assert imports.link_import_run(import_id=job.pk) is True
    job.refresh_from_db()
    assert job.status == ImportStatus.FAILED and job.error == imports.DEPARTED_UPLOADER
    assert UrlLink.objects.filter(code="imp-one").exists()  # the batch done before
    assert not UrlLink.objects.filter(code="imp-two").exists()  # none after


def test_a_deleted_members_import_fails_instead_of_passing_to_the_heir(team):
    job = imports.link_import_queue(
        user=team.editor, file_name="links.csv", data=PLAIN_CSV, workspace=team.workspace
    )
    team.editor.delete()
    job = LinkImport.objects.get(pk=job.pk)
    assert job.owner == team.owner  # handed over (e42bb09), but not run as the owner
    assert job.status == ImportStatus.FAILED and job.error == imports.DEPARTED_UPLOADER


def test_a_viewer_leaving_changes_nothing_of_the_writers(team, django_capture_on_commit_callbacks):
    hook = _editors_hook(team)
    other = UserFactory(username="someone")
    Membership.objects.create(workspace=team.workspace, user=other, role=Role.VIEWER)
    member_remove(by=team.owner, workspace=team.workspace, username="someone")
    with django_capture_on_commit_callbacks(execute=True):
        _new_team_link(team, 3)
    hook.refresh_from_db()
    assert hook.is_active and _heard(hook) == 1


def test_a_removed_members_export_in_progress_stops_at_the_next_page(team):
    from links.selectors import link_export_rows

    for n in range(3):
        link_create(user=team.owner, workspace=team.workspace, long_url=f"https://ex.com/x/{n}")
    rows = link_export_rows(user=team.editor, workspace_id=team.workspace.pk, batch_size=1)
    first = next(rows)  # the download has begun
    member_remove(by=team.owner, workspace=team.workspace, username=team.editor.username)
    link_create(user=team.owner, workspace=team.workspace, long_url="https://ex.com/x/after")
    rest = list(rows)
    assert first["code"] == "acme-sale"
    assert rest == []  # nothing more once they are out, the link made after least of all
