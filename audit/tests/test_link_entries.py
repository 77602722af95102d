"""Every change to a link leaves one audit entry: who, which channel, the fields before and
after, whichever way it came in (the site, the API, the Shlink layer, the admin, a bulk call)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import api_key_create
from audit.channels import acting_through
from audit.models import AppendOnly, AuditEntry
from audit.services import MASK
from links.services.bulk import link_create_many
from links.services.bulk_change import link_change_many
from links.services.change import link_revoke, link_update
from links.services.create import link_create

pytestmark = pytest.mark.django_db


def _link(user, **values):
    return link_create(user=user, long_url="https://example.com/a", **values).link


def _entries(link) -> list[AuditEntry]:
    rows = AuditEntry.objects.filter(object_type="link", object_id=str(link.pk))
    return list(rows.order_by("pk"))


def test_creating_a_link_records_its_fields_from_nothing(user):
    with acting_through("web"):
        link = _link(user, title="Spring", tags=["b", "a"])

    (entry,) = _entries(link)
    assert (entry.action, entry.channel, entry.actor, entry.actor_id) == (
        "link.create",
        "web",
        "marketer",
        user.pk,
    )
    assert entry.workspace_id == link.workspace_id
    assert entry.object_repr == link.code
    assert entry.changes["long_url"] == [None, "https://example.com/a"]
    assert entry.changes["title"] == [None, "Spring"]
    assert entry.changes["tags"] == [None, ["a", "b"]]


def test_an_update_records_only_the_fields_it_changed_before_and_after(user):
    link = _link(user, title="Old")

    link_update(code=link.code, user=user, title="New", tags=["x"])

    entry = _entries(link)[-1]
    assert entry.action == "link.update"
    assert entry.channel == "command"  # outside any request
    assert entry.changes == {"title": ["Old", "New"], "tags": [[], ["x"]]}


def test_an_update_that_changes_nothing_records_nothing(user):
    link = _link(user, title="Same")

    link_update(code=link.code, user=user, title="Same")

    assert [e.action for e in _entries(link)] == ["link.create"]


def test_a_password_is_recorded_as_set_never_as_its_hash(user):
    link = _link(user)

    link_update(code=link.code, user=user, password="open-sesame-42")
    link.refresh_from_db()

    entry = _entries(link)[-1]
    assert entry.changes == {"password_hash": [None, MASK]} or entry.changes == {
        "password_hash": ["", MASK]
    }
    assert link.password_hash not in str(entry.changes)


def test_a_refused_change_records_nothing(user):
    link = _link(user)

    with pytest.raises(ValidationError):
        link_update(code=link.code, user=user, long_url="not a url")

    assert [e.action for e in _entries(link)] == ["link.create"]


def test_revoking_records_the_revoke(user):
    link = _link(user)

    link_revoke(code=link.code, user=user)

    entry = _entries(link)[-1]
    assert entry.action == "link.revoke"
    assert entry.changes["revoked_at"][0] is None
    assert entry.changes["revoked_at"][1] is not None


def test_bulk_calls_record_one_entry_per_link_changed(user):
    results = link_create_many(
        user=user,
        items=[{"long_url": "https://example.com/1"}, {"long_url": "https://example.com/2"}],
    )
    links = [r.link for r in results]
    assert [len(_entries(link)) for link in links] == [1, 1]

    link_change_many(
        user=user, codes=[link.code for link in links], changes={"archived": True, "tags": ["q"]}
    )
    link_change_many(user=user, codes=[links[0].code], changes={"revoked": True})

    first, second = (_entries(link) for link in links)
    assert [e.action for e in first] == ["link.create", "link.update", "link.revoke"]
    assert [e.action for e in second] == ["link.create", "link.update"]
    assert second[1].changes == {"archived": [False, True], "tags": [[], ["q"]]}
    assert first[2].changes["revoked_at"][0] is None


def test_entries_are_append_only(user):
    link = _link(user)
    entry = _entries(link)[0]

    entry.action = "link.forged"
    with pytest.raises(AppendOnly):
        entry.save()
    with pytest.raises(AppendOnly):
        entry.delete()
    with pytest.raises(AppendOnly):
        AuditEntry.objects.filter(pk=entry.pk).update(action="x")
    with pytest.raises(AppendOnly):
        AuditEntry.objects.all().delete()


def test_api_shlink_and_admin_changes_leave_three_entries_with_their_channels(
    user, staff_user, client
):
    link = _link(user, title="Start")
    _, raw_key = api_key_create(user=user, name="audit")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {raw_key}")
    shlink = APIClient()
    shlink.credentials(HTTP_X_API_KEY=raw_key)

    response = api.patch(f"/api/v1/links/{link.code}/", {"title": "From API"}, format="json")
    assert response.status_code == 200, response.content
    response = shlink.patch(
        f"/rest/v3/short-urls/{link.code}", {"title": "From Shlink"}, format="json"
    )
    assert response.status_code == 200, response.content
    client.force_login(staff_user)
    response = client.post(
        reverse("admin:links_urllink_gates", args=[link.pk]), {"max_visits": "25"}
    )
    assert response.status_code == 302

    entries = _entries(link)[1:]
    assert [(e.channel, e.actor, e.changes) for e in entries] == [
        ("api", "marketer", {"title": ["Start", "From API"]}),
        ("compat", "marketer", {"title": ["From API", "From Shlink"]}),
        ("admin", "staffer", {"max_visits": [None, 25]}),
    ]


def test_signing_in_to_the_admin_is_recorded_the_sites_sign_in_is_not(client, staff_user, user):
    response = client.post(
        reverse("admin:login"), {"username": "staffer", "password": "s3cret-pass-3"}
    )
    assert response.status_code == 302
    response = client.post(reverse("login"), {"username": "marketer", "password": "s3cret-pass-1"})

    (entry,) = AuditEntry.objects.filter(action="admin.sign_in")
    assert (entry.actor, entry.channel, entry.object_repr) == ("staffer", "admin", "staffer")
