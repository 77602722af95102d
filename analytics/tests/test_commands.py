"""Maintenance commands: rebuild hourly counts, purge old visits, drain the buffer."""

import datetime as dt
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from analytics import buffer, selectors, services
from analytics.models import HourlyClick, VisitRecord
from analytics.tests.visits import GOOGLEBOT, visit_message
from core.redis_conn import redis_client


def _run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_rebuild_hourly_clicks_recomputes_rows_with_progress(make_link):
    link = make_link()
    now = dt.datetime.now(dt.UTC)
    services.store_visits(
        messages=[
            visit_message(link, at=now - dt.timedelta(days=2)),
            visit_message(link, ua=GOOGLEBOT),
        ]
    )
    expected = list(HourlyClick.objects.values_list("hour", "clicks", "bot_clicks"))
    HourlyClick.objects.update(clicks=99, bot_clicks=99)
    since = (now - dt.timedelta(days=3)).date().isoformat()
    output = _run("rebuild_hourly_clicks", "--since", since)
    assert "day 1/" in output
    assert "[##############################]" in output
    assert "Rebuilt 2 hourly row(s)" in output
    assert list(HourlyClick.objects.values_list("hour", "clicks", "bot_clicks")) == expected


def test_rebuild_hourly_clicks_refuses_a_bad_date():
    with pytest.raises(CommandError, match="not a date"):
        call_command("rebuild_hourly_clicks", "--since", "yesterday")


@pytest.mark.django_db
def test_purge_visits_keeps_hourly_counts(make_link):
    link = make_link()
    old = dt.datetime.now(dt.UTC) - dt.timedelta(days=100)
    services.store_visits(messages=[visit_message(link, at=old), visit_message(link)])
    output = _run("purge_visits", "--older-than", "90")
    assert "Deleted 1 visit(s)" in output
    assert VisitRecord.objects.count() == 1
    assert sum(HourlyClick.objects.values_list("clicks", flat=True)) == 2
    with pytest.raises(CommandError):
        call_command("purge_visits", "--older-than", "0")


@pytest.mark.django_db
def test_drain_visits_empties_the_buffer_and_counts(requires_redis, make_link):
    link = make_link()
    redis_client().rpush(buffer.VISITS_KEY, *[visit_message(link) for _ in range(2500)])
    output = _run("drain_visits")
    assert "Stored 2500 visit(s) in " in output
    # At least this link's hour; in the full services run another pending pair may come too.
    assert re.search(r"recomputed [1-9]\d* hourly row\(s\)", output), output
    assert "0 still buffered, 0 in the dead list" in output
    assert HourlyClick.objects.get(link=link).clicks == 2500
    assert selectors.pipeline_status()["buffered"] == 0
