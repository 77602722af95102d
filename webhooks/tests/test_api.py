"""The webhooks API: a person's own webhooks only (others' ids are 404), webhooks:write for API
keys, the delivery log and the test ping."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from accounts.models import all_scopes
from accounts.services import api_key_create
from core.api.scopes import ApiScope
from webhooks import services

pytestmark = pytest.mark.django_db

PUBLIC = "https://93.184.215.14/hook"


def _api(user, scopes=None) -> APIClient:
    _, raw = api_key_create(user=user, name="tool", scopes=scopes or all_scopes())
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    return client


def test_create_list_change_and_delete(user):
    api = _api(user)
    created = api.post(
        "/api/v1/webhooks/", {"url": PUBLIC, "events": ["link.created"]}, format="json"
    )
    assert created.status_code == 201
    body = created.json()
    assert body["url"] == PUBLIC and body["events"] == ["link.created"]
    assert body["secret"].startswith("whsec_") and body["is_active"] is True
    hook_id = body["id"]
    assert [hook["id"] for hook in api.get("/api/v1/webhooks/").json()] == [hook_id]
    changed = api.patch(
        f"/api/v1/webhooks/{hook_id}/",
        {"events": ["link.clicked", "link.revoked"], "is_active": False},
        format="json",
    )
    assert changed.status_code == 200
    assert changed.json()["events"] == ["link.revoked", "link.clicked"]
    assert changed.json()["is_active"] is False
    assert api.delete(f"/api/v1/webhooks/{hook_id}/").status_code == 204
    assert api.get(f"/api/v1/webhooks/{hook_id}/").status_code == 404


def test_bad_input_is_refused_with_the_field(user):
    api = _api(user)
    private = api.post(
        "/api/v1/webhooks/", {"url": "http://10.0.0.1/", "events": ["link.created"]}, format="json"
    )
    assert private.status_code == 400 and "url" in private.json()
    unknown = api.post(
        "/api/v1/webhooks/", {"url": PUBLIC, "events": ["link.eaten"]}, format="json"
    )
    assert unknown.status_code == 400 and "events" in unknown.json()
    empty = api.post("/api/v1/webhooks/", {"url": PUBLIC, "events": []}, format="json")
    assert empty.status_code == 400 and "events" in empty.json()


def test_other_peoples_webhooks_are_not_found(user, other_user):
    theirs = services.webhook_create(user=other_user, url=PUBLIC, events=["link.created"])
    api = _api(user)
    assert api.get("/api/v1/webhooks/").json() == []
    for response in (
        api.get(f"/api/v1/webhooks/{theirs.pk}/"),
        api.patch(f"/api/v1/webhooks/{theirs.pk}/", {"is_active": False}, format="json"),
        api.delete(f"/api/v1/webhooks/{theirs.pk}/"),
        api.get(f"/api/v1/webhooks/{theirs.pk}/deliveries/"),
        api.post(f"/api/v1/webhooks/{theirs.pk}/test/"),
    ):
        assert response.status_code == 404
    theirs.refresh_from_db()
    assert theirs.is_active is True


def test_a_key_without_webhooks_write_is_refused_reads_and_writes(user):
    services.webhook_create(user=user, url=PUBLIC, events=["link.created"])
    api = _api(user, scopes=[ApiScope.LINKS_READ, ApiScope.LINKS_WRITE, ApiScope.STATS_READ])
    listed = api.get("/api/v1/webhooks/")
    assert listed.status_code == 403 and "webhooks:write" in listed.json()["detail"]
    made = api.post("/api/v1/webhooks/", {"url": PUBLIC, "events": ["link.created"]}, format="json")
    assert made.status_code == 403
    assert _api(user, scopes=[ApiScope.WEBHOOKS_WRITE]).get("/api/v1/webhooks/").status_code == 200


def test_anonymous_callers_are_refused(client):
    assert APIClient().get("/api/v1/webhooks/").status_code == 401


def test_the_test_ping_and_the_delivery_log(user, receiver):
    api = _api(user)
    hook_id = api.post(
        "/api/v1/webhooks/", {"url": receiver.url, "events": ["link.created"]}, format="json"
    ).json()["id"]
    sent = api.post(f"/api/v1/webhooks/{hook_id}/test/")
    # Queued, not sent on the request: a slow receiver cannot hold the caller (or a web thread).
    assert sent.status_code == 202
    assert sent.json()["status"] == "pending" and sent.json()["attempts"] == 0
    assert receiver.received == []
    assert services.webhook_deliver_due() == 1  # the webhooks' lane
    assert len(receiver.received) == 1
    log = api.get(f"/api/v1/webhooks/{hook_id}/deliveries/").json()
    assert [(entry["event"], entry["attempts"], entry["status"]) for entry in log] == [
        ("ping", 1, "succeeded")
    ]
    assert log[0]["response_excerpt"] == "ok"
