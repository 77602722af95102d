"""A link's start (valid_since, issue #27): the one state rule (LinkStatus.SCHEDULED before it),
the services' checks, and every channel that calls them: the API, the create and edit forms,
My links and its filter, the stats page, the admin and the exports. The redirect's side is
serving/tests/test_not_yet.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from links.imports.formats import parse_file
from links.imports.service import link_import
from links.models import LinkStatus, UrlLink
from links.selectors import link_export_rows, link_list
from links.services.change import link_revoke, link_update
from links.services.create import link_create
from links.tests.helpers import client_for

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)


def _at(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


@pytest.fixture
def soon(user) -> UrlLink:
    """A link that starts in an hour and expires in a day."""
    now = timezone.now()
    return link_create(
        user=user,
        long_url="https://example.com/launch",
        valid_since=now + HOUR,
        expires_at=now + 24 * HOUR,
    ).link


# --- The rule ---------------------------------------------------------------------------------


def test_states_around_the_start():
    start = datetime(2030, 5, 1, 9, 0, tzinfo=UTC)
    link = UrlLink(long_url="https://example.com/", valid_since=start)
    assert link.status_at(start - timedelta(seconds=1)) == LinkStatus.SCHEDULED
    # From the start itself on it is live (the redirect compares the same way).
    assert link.status_at(start) == LinkStatus.ACTIVE
    assert link.status_at(start + timedelta(seconds=1)) == LinkStatus.ACTIVE


def test_what_wins_over_scheduled_and_what_it_wins_over():
    start = datetime(2030, 5, 1, 9, 0, tzinfo=UTC)
    before = start - HOUR
    capped_out = UrlLink(valid_since=start, max_visits=1, visits_used=1)
    assert capped_out.status_at(before) == LinkStatus.SCHEDULED  # its visitors see "not yet"
    assert capped_out.status_at(start) == LinkStatus.LIMIT_REACHED
    # A revoke sets the expiry to its moment, before the start: revoked.
    revoked = UrlLink(valid_since=start, expires_at=before - HOUR, revoked_at=before - HOUR)
    assert revoked.status_at(before) == LinkStatus.REVOKED
    # An expiry before the start (rows written around the services): over for good, expired.
    ended = UrlLink(valid_since=start, expires_at=before - HOUR)
    assert ended.status_at(before) == LinkStatus.EXPIRED


def test_sql_agrees_with_status_at_around_the_start(user, soon):
    now = timezone.now()
    links = UrlLink.objects.filter(pk=soon.pk)
    for moment, status in (
        (now, LinkStatus.SCHEDULED),
        (soon.valid_since, LinkStatus.ACTIVE),
        (soon.valid_since + HOUR, LinkStatus.ACTIVE),
    ):
        assert soon.status_at(moment) == status
        assert list(links.with_status(status, moment)) == [soon], (moment, status)
        others = set(LinkStatus.values) - {status}
        assert not links.with_statuses(others, moment).exists(), (moment, status)


# --- The services -----------------------------------------------------------------------------


def test_a_start_at_or_after_the_expiry_is_refused_naming_the_start(user):
    now = timezone.now()
    for start in (now + 2 * HOUR, now + HOUR):
        with pytest.raises(ValidationError) as refused:
            link_create(
                user=user,
                long_url="https://example.com/x",
                valid_since=start,
                expires_at=now + HOUR,
            )
        assert list(refused.value.message_dict) == ["valid_since"]
        assert "before the expiry" in refused.value.message_dict["valid_since"][0]
    assert not UrlLink.objects.exists()


def test_a_start_already_past_is_taken_and_the_link_is_live(user):
    start = timezone.now() - HOUR
    link = link_create(user=user, long_url="https://example.com/x", valid_since=start).link
    assert (link.valid_since, link.status) == (start, LinkStatus.ACTIVE)


@pytest.mark.parametrize("year", [1, 1970, 9999])
def test_a_start_out_of_range_is_refused(user, year):
    with pytest.raises(ValidationError) as refused:
        link_create(
            user=user,
            long_url="https://example.com/x",
            valid_since=datetime(year, 6, 1, tzinfo=UTC),
        )
    assert list(refused.value.message_dict) == ["valid_since"]


def test_a_change_names_the_field_it_changes(user, soon):
    with pytest.raises(ValidationError) as refused:
        link_update(code=soon.code, user=user, valid_since=soon.expires_at + HOUR)
    assert list(refused.value.message_dict) == ["valid_since"]
    with pytest.raises(ValidationError) as refused:
        link_update(code=soon.code, user=user, expires_at=soon.valid_since - timedelta(minutes=1))
    assert list(refused.value.message_dict) == ["expires_at"]
    assert "after the start" in refused.value.message_dict["expires_at"][0]
    # Both at once, in order: taken.
    later = timezone.now() + 48 * HOUR
    link = link_update(code=soon.code, user=user, valid_since=later, expires_at=later + HOUR)
    assert (link.valid_since, link.expires_at) == (later, later + HOUR)
    # None takes the start away: live at once.
    assert link_update(code=soon.code, user=user, valid_since=None).status == LinkStatus.ACTIVE


def test_a_plain_create_does_not_hand_back_a_scheduled_link(user, soon):
    again = link_create(user=user, long_url=soon.long_url)
    assert again.created and again.link.pk != soon.pk


def test_a_revoked_scheduled_link_is_revoked(user, soon):
    link_revoke(code=soon.code, user=user)
    soon.refresh_from_db()
    assert soon.status == LinkStatus.REVOKED


# --- The API ----------------------------------------------------------------------------------


def test_the_api_creates_shows_and_changes_the_start(user):
    api = client_for(user)
    start = (timezone.now() + HOUR).replace(microsecond=0)
    made = api.post(
        "/api/v1/links/",
        {"long_url": "https://example.com/api", "valid_since": _at(start)},
        format="json",
    )
    assert made.status_code == 201, made.content
    body = made.json()
    assert (body["valid_since"], body["status"], body["is_active"]) == (
        _at(start),
        "scheduled",
        False,
    )
    code = body["code"]
    shown = api.get(f"/api/v1/links/{code}/").json()
    assert (shown["valid_since"], shown["status"]) == (_at(start), "scheduled")

    cleared = api.patch(f"/api/v1/links/{code}/", {"valid_since": None}, format="json")
    assert cleared.status_code == 200, cleared.content
    assert (cleared.json()["valid_since"], cleared.json()["status"]) == (None, "active")
    again = api.patch(f"/api/v1/links/{code}/", {"valid_since": _at(start)}, format="json")
    assert again.json()["status"] == "scheduled"


def test_the_api_refuses_a_start_after_the_expiry_with_a_400_naming_it(user, soon):
    api = client_for(user)
    now = timezone.now()
    made = api.post(
        "/api/v1/links/",
        {
            "long_url": "https://example.com/api",
            "valid_since": _at(now + 2 * HOUR),
            "expires_at": _at(now + HOUR),
        },
        format="json",
    )
    assert made.status_code == 400
    assert list(made.json()) == ["valid_since"]
    changed = api.patch(
        f"/api/v1/links/{soon.code}/",
        {"valid_since": _at(soon.expires_at + HOUR)},
        format="json",
    )
    assert changed.status_code == 400
    assert list(changed.json()) == ["valid_since"]
    bulk = api.post(
        "/api/v1/links/bulk/",
        {
            "items": [
                {"long_url": "https://example.com/b1", "valid_since": _at(now + HOUR)},
                {
                    "long_url": "https://example.com/b2",
                    "valid_since": _at(now + 2 * HOUR),
                    "expires_at": _at(now + HOUR),
                },
            ]
        },
        format="json",
    )
    assert bulk.status_code == 200, bulk.content
    first, second = bulk.json()["results"]
    assert (first["status"], first["link"]["status"]) == (201, "scheduled")
    assert (second["status"], list(second["errors"])) == (400, ["valid_since"])


def test_the_api_lists_by_state(user, soon):
    live = link_create(user=user, long_url="https://example.com/live").link
    api = client_for(user)

    def codes(**params) -> set[str]:
        answer = api.get("/api/v1/links/", params)
        assert answer.status_code == 200, answer.content
        return {item["code"] for item in answer.json()["results"]}

    assert codes(status="scheduled") == {soon.code}
    assert codes(status="active") == {live.code}
    assert codes(active="true") == {live.code}
    assert codes(active="false") == {soon.code}  # not active: not started yet
    assert codes(active="true", status="scheduled") == set()
    refused = api.get("/api/v1/links/", {"status": "later"})
    assert refused.status_code == 400 and "status" in refused.json()


# --- The pages --------------------------------------------------------------------------------


def _form_time(moment: datetime) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%dT%H:%M")


def test_the_create_form_takes_a_start(client, user):
    client.force_login(user)
    start = (timezone.now() + HOUR).replace(second=0, microsecond=0)
    page = client.get(reverse("home")).content.decode()
    assert 'name="valid_since"' in page and 'type="datetime-local"' in page
    response = client.post(
        reverse("home"),
        {
            "long_url": "https://example.com/form",
            "redirect_type": "302",
            "pass_query": "on",
            "valid_since": _form_time(start),
        },
    )
    assert response.status_code == 302, response.context and response.context["form"].errors
    link = UrlLink.objects.get(long_url="https://example.com/form")
    assert (link.valid_since, link.status) == (start, LinkStatus.SCHEDULED)
    created = client.get(response["Location"]).content.decode()
    assert f"starts {timezone.localtime(start):%Y-%m-%d %H:%M}" in created


def test_the_create_form_says_a_start_after_the_expiry_beside_the_start(client, user):
    client.force_login(user)
    now = timezone.now()
    response = client.post(
        reverse("home"),
        {
            "long_url": "https://example.com/form",
            "redirect_type": "302",
            "pass_query": "on",
            "valid_since": _form_time(now + 3 * HOUR),
            "expires_at": _form_time(now + 2 * HOUR),
        },
    )
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert list(errors) == ["valid_since"]
    assert "before the expiry" in errors["valid_since"][0]
    assert not UrlLink.objects.exists()


def test_the_edit_form_sets_and_clears_the_start(client, user):
    client.force_login(user)
    link = link_create(user=user, long_url="https://example.com/edit").link
    url = reverse("link_edit", args=[link.code])
    start = (timezone.now() + HOUR).replace(second=0, microsecond=0)
    base = {"long_url": link.long_url, "title": "", "redirect_type": "302", "pass_query": "on"}
    assert client.post(url, {**base, "valid_since": _form_time(start)}).status_code == 302
    link.refresh_from_db()
    assert (link.valid_since, link.status) == (start, LinkStatus.SCHEDULED)
    page = client.get(url).content.decode()
    assert f'value="{_form_time(start)}"' in page  # shown as it is, beside the expiry
    assert client.post(url, {**base, "valid_since": ""}).status_code == 302
    link.refresh_from_db()
    assert (link.valid_since, link.status) == (None, LinkStatus.ACTIVE)


def test_my_links_shows_and_filters_scheduled_links(client, user, soon):
    live = link_create(user=user, long_url="https://example.com/live").link
    ended = link_create(user=user, long_url="https://example.com/ended").link
    link_revoke(code=ended.code, user=user)
    client.force_login(user)
    page = client.get(reverse("dashboard"))
    statuses = {row["link"].code: row["status"] for row in page.context["rows"]}
    assert statuses == {soon.code: "scheduled", live.code: "active", ended.code: "revoked"}
    html = page.content.decode()
    assert "Scheduled: not started yet" in html  # the filter offers it
    assert f'starts <span class="nowrap">{timezone.localtime(soon.valid_since):%Y-%m-%d}' in html

    def shown(status: str) -> list[str]:
        answer = client.get(reverse("dashboard"), {"status": status})
        return [row["link"].code for row in answer.context["rows"]]

    assert shown("scheduled") == [soon.code]
    assert shown("active") == [live.code]
    assert shown("expired") == [ended.code]  # Stopped: a link not started yet is not stopped


def test_the_stats_page_says_scheduled_and_when(client, user, soon):
    client.force_login(user)
    page = client.get(reverse("link_stats", args=[soon.code]))
    assert page.context["status"] == "scheduled"
    html = page.content.decode()
    assert "Scheduled" in html
    assert f"starts {timezone.localtime(soon.valid_since):%Y-%m-%d %H:%M}" in html


def test_the_admin_lists_and_filters_scheduled_links(admin_client, user, soon):
    live = link_create(user=user, long_url="https://example.com/live").link
    changelist = reverse("admin:links_urllink_changelist")
    page = admin_client.get(changelist, {"status": "scheduled"})
    assert page.status_code == 200
    assert [link.code for link in page.context["cl"].result_list] == [soon.code]
    html = page.content.decode()
    assert "Scheduled" in html and "column-starts" in html
    active = admin_client.get(changelist, {"status": "active"}).context["cl"].result_list
    assert [link.code for link in active] == [live.code]


def test_the_exports_carry_the_start_and_read_it_back(client, user, other_user, soon):
    rows = {row["code"]: row for row in link_export_rows(user=user)}
    assert (rows[soon.code]["valid_since"], rows[soon.code]["status"]) == (
        soon.valid_since,
        "scheduled",
    )
    client.force_login(user)
    for fmt in ("csv", "json"):
        download = client.get(reverse("links_export", args=[fmt]))
        data = b"".join(download.streaming_content)
        if fmt == "json":
            exported = json.loads(data)["links"][0]["valid_since"]
            assert exported == soon.valid_since.astimezone(UTC).isoformat()
        else:
            assert soon.valid_since.astimezone(UTC).isoformat() in data.decode()
        # The file imported by someone else brings a link back with the same start.
        report = link_import(user=other_user, parsed=parse_file(data), request_host="testserver")
        assert [entry.outcome for entry in report.entries] == ["new code"], report.entries
        copy = UrlLink.objects.get(owner=other_user, code=report.entries[0].code)
        assert (copy.valid_since, copy.status) == (soon.valid_since, LinkStatus.SCHEDULED)
        copy.delete()


def test_link_list_statuses_take_the_live_cap_into_account(user, soon):
    assert list(link_list(user=user, statuses=[LinkStatus.SCHEDULED])) == [soon]
    assert list(link_list(user=user, statuses=[])) == []
    with pytest.raises(ValueError, match="No link status"):
        list(link_list(user=user, statuses=["later"]))
