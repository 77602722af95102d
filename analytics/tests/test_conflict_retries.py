"""Visits and conversions that lose a write conflict are run again and counted exactly once
(issue #31). A real InnoDB deadlock (error 1213, as Galera's certification conflict) makes the
first attempt its victim: core.tests.deadlocks."""

import datetime as dt

import pytest

from analytics import services
from analytics.models import Conversion, HourlyClick, VisitRecord, utc_hour
from analytics.services.ingest import store_visits
from analytics.tests.factories import add_visits
from analytics.tests.visits import FIREFOX_WINDOWS, visit_message
from core.tests.deadlocks import lost_once
from links.models import UrlLink
from links.services.create import link_create

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_visit_batch_that_loses_a_deadlock_is_stored_once_with_exact_hours(
    requires_mysql, user, caplog
):
    link = link_create(user=user, long_url="https://example.com/visited").link
    at = dt.datetime.now(dt.UTC).replace(minute=30)
    hour = utc_hour(at)
    HourlyClick.objects.create(link=link, hour=hour)  # the row the roll-up rewrites (B)
    messages = [
        visit_message(link, at=at, event=f"ev{n:030d}", ip=f"203.0.113.{n % 3}") for n in range(7)
    ] + [visit_message(link, at=at, event="ff" + "0" * 30, ua=FIREFOX_WINDOWS, ip="198.51.100.9")]
    visits = VisitRecord._meta.db_table
    hourly = HourlyClick._meta.db_table
    # The store inserts the visits (A: the first one's row), then upserts the hour's row (B).
    with lost_once(
        caplog,
        hold=(f"SELECT id FROM {hourly} WHERE link_id = %s FOR UPDATE", [link.pk]),  # noqa: S608
        then=(f"SELECT id FROM {visits} WHERE event_id = %s FOR UPDATE", ["ev" + "0" * 30]),  # noqa: S608
    ):
        stored = store_visits(messages=messages)

    assert stored == 8
    assert VisitRecord.objects.filter(link=link).count() == 8
    row = HourlyClick.objects.get(link=link, hour=hour)
    assert (row.clicks, row.unique_visitors) == (8, 4)
    # Delivered again (a batch taken twice): nothing more.
    assert store_visits(messages=messages) == 0
    row.refresh_from_db()
    assert row.clicks == 8


def test_a_lead_that_loses_a_deadlock_is_counted_once(requires_mysql, user, caplog):
    link = link_create(user=user, long_url="https://shop.example.com/x", track_conversions=True)
    link = link.link
    (click,) = add_visits(link, 1)
    before = Conversion.objects.order_by("-id").values_list("id", flat=True).first() or 0
    conversions = Conversion._meta.db_table
    links = UrlLink._meta.db_table
    # The insert writes its row (A), then checks its link (B: a shared lock on the parent row).
    with lost_once(
        caplog,
        hold=(f"SELECT id FROM {links} WHERE id = %s FOR UPDATE", [link.pk]),  # noqa: S608
        then=(f"SELECT id FROM {conversions} WHERE id > %s FOR UPDATE", [before]),  # noqa: S608
    ):
        result = services.lead_track(
            user=user, click_id=click.event_id, event_name="signup", customer_id="c1"
        )

    assert result.created
    assert Conversion.objects.filter(link=link).count() == 1
    again = services.lead_track(
        user=user, click_id=click.event_id, event_name="signup", customer_id="c1"
    )
    assert not again.created and again.conversion.pk == result.conversion.pk
    assert Conversion.objects.filter(link=link).count() == 1
