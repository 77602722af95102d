"""Owners read their workspace's log: `GET /api/v1/audit/` (filters, pages, CSV, the
audit:read scope) and the log page; other members and other people read none of it."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.services import api_key_create
from audit.models import AuditEntry
from links.services.change import link_update
from links.services.create import link_create
from workspaces.services import member_add, workspace_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(user, other_user):
    team = workspace_create(user=user, name="Team")
    member_add(by=user, workspace=team, username="rival", role="editor")
    link = link_create(user=other_user, long_url="https://example.com/", workspace=team).link
    link_update(code=link.code, user=other_user, title="=cmd|' /C calc'!A0")
    team.link = link
    return team


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_owners_read_the_entries_with_their_fields(user, team):
    response = _api(user).get("/api/v1/audit/", {"workspace": team.slug})

    assert response.status_code == 200
    body = response.json()
    # The workspace made, its owner and its editor joining, the link made and changed.
    assert body["count"] == 5
    newest = body["results"][0]
    assert newest["action"] == "link.update"
    assert newest["channel"] == "command"
    assert newest["actor"] == "rival"
    assert newest["object"] == {"type": "link", "id": str(team.link.pk), "name": team.link.code}
    assert newest["changes"] == {"title": ["", "=cmd|' /C calc'!A0"]}
    assert set(newest) == {"id", "action", "channel", "actor", "at", "object", "changes"}


def test_filters_narrow_the_entries(user, team):
    api = _api(user)

    def actions(**query):
        body = api.get("/api/v1/audit/", {"workspace": team.slug, **query}).json()
        return [entry["action"] for entry in body["results"]]

    assert actions(action="link") == ["link.update", "link.create"]
    assert actions(action="link.create") == ["link.create"]
    assert actions(actor="rival") == ["link.update", "link.create"]
    assert actions(object=team.link.code) == ["link.update", "link.create"]
    today = timezone.localdate()
    assert len(actions(since=today.isoformat(), until=today.isoformat())) == 5
    assert actions(until=(today - timedelta(days=1)).isoformat()) == []
    assert actions(since=(today + timedelta(days=1)).isoformat()) == []
    assert api.get("/api/v1/audit/", {"since": "yesterday"}).status_code == 400


def test_editors_and_strangers_read_nothing(team, other_user, django_user_model):
    response = _api(other_user).get("/api/v1/audit/", {"workspace": team.slug})
    assert response.status_code == 403
    assert response.json() == {"detail": "Only the workspace's owners read its audit log."}
    # Without ?workspace=: the workspaces they own (their personal one), none of the team's.
    body = _api(other_user).get("/api/v1/audit/").json()
    assert body["count"] == 0
    stranger = django_user_model.objects.create_user("stranger", password="x-pass-12345")
    response = _api(stranger).get("/api/v1/audit/", {"workspace": team.slug})
    assert response.status_code == 404


def test_api_keys_need_the_audit_scope(user, team):
    _, without = api_key_create(user=user, name="links", scopes=["links:read"], workspace=team)
    _, with_scope = api_key_create(user=user, name="audit", scopes=["audit:read"], workspace=team)
    client = APIClient()

    client.credentials(HTTP_AUTHORIZATION=f"Token {without}")
    assert client.get("/api/v1/audit/").status_code == 403
    client.credentials(HTTP_AUTHORIZATION=f"Token {with_scope}")
    body = client.get("/api/v1/audit/").json()
    # The key's own workspace: its entries, and the two keys' own creation.
    assert {e["action"] for e in body["results"]} >= {"link.update", "api_key.create"}


def test_pages_of_entries(user, team):
    body = _api(user).get("/api/v1/audit/", {"workspace": team.slug, "page_size": 2}).json()
    assert len(body["results"]) == 2 and body["next"]


def test_csv_download_guards_formulas(user, team):
    response = _api(user).get("/api/v1/audit/", {"workspace": team.slug, "download": "csv"})

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [row["action"] for row in rows][:2] == ["link.update", "link.create"]
    assert rows[0]["changes"].startswith('{"title"')
    assert rows[0]["actor"] == "rival"


def test_the_log_page_for_owners_only(client, user, other_user, team):
    url = reverse("workspace_audit", args=[team.slug])
    client.force_login(user)

    page = client.get(url, {"action": "link.update"})
    assert page.status_code == 200
    html = page.content.decode()
    assert team.link.code in html and "link.update" in html and "link.create</code>" not in html
    assert "=cmd|&#x27; /C calc&#x27;!A0" in html  # escaped
    download = client.get(url, {"download": "csv"})
    assert download["Content-Disposition"] == f'attachment; filename="audit-{team.slug}.csv"'

    client.force_login(other_user)
    assert client.get(url).status_code == 403


def test_entries_are_read_only_in_the_admin(admin_client, team):
    entry = AuditEntry.objects.first()
    changelist = admin_client.get(reverse("admin:audit_auditentry_changelist"))
    assert changelist.status_code == 200
    assert admin_client.get(reverse("admin:audit_auditentry_add")).status_code == 403
    response = admin_client.post(
        reverse("admin:audit_auditentry_delete", args=[entry.pk]), {"post": "yes"}
    )
    assert response.status_code == 403
    assert AuditEntry.objects.filter(pk=entry.pk).exists()
