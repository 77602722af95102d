"""Data migrations, run on data shaped as the previous migration left it."""

import datetime as dt

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("analytics", "0002_stats_rollups")]
AFTER = [("analytics", "0003_bot_name_and_kind")]
HOUR = dt.datetime(2026, 3, 1, 9, tzinfo=dt.UTC)


# Links as they were before workspaces (links 0010): these data predate them, and the
# historical link model has no workspace to give.
LINKS_BEFORE_WORKSPACES = ("links", "0009_link_imports")


def _migrate(target):
    if not any(app == "links" for app, _ in target) and len(target) == 1:
        target = [*target, LINKS_BEFORE_WORKSPACES]
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(target)
    return executor.loader.project_state(target).apps


@pytest.mark.django_db(transaction=True)
def test_bots_stored_before_kinds_keep_their_name_and_count_as_other():
    apps = _migrate(BEFORE)
    user = apps.get_model("auth", "User").objects.create(username="before-kinds")
    link = apps.get_model("links", "UrlLink").objects.create(
        owner_id=user.pk,
        code="abc",
        long_url="https://example.com/",
        long_url_hash="h" * 40,
        code_type="custom",
    )
    visits = apps.get_model("analytics", "VisitRecord")
    for n, (browser, is_bot) in enumerate([("Googlebot", True), ("Chrome", False)]):
        visits.objects.create(
            link_id=link.pk, code="abc", event_id=f"e{n}", client_id=f"c{n}",
            visit_time=HOUR, browser_type=browser, is_bot=is_bot,
        )  # fmt: skip
    for model_name, period in (("HourlyBreakdown", "hour"), ("DailyBreakdown", "day")):
        apps.get_model("analytics", model_name).objects.create(
            link_id=link.pk, dimension="bots", value="Googlebot", clicks=3, **{period: HOUR}
        )
    try:
        apps = _migrate(AFTER)
        visits = apps.get_model("analytics", "VisitRecord")
        assert set(visits.objects.values_list("browser_type", "bot_name", "bot_kind")) == {
            ("Googlebot", "Googlebot", "other"),
            ("Chrome", "", ""),
        }
        for model_name in ("HourlyBreakdown", "DailyBreakdown"):
            rows = apps.get_model("analytics", model_name).objects.filter(dimension="bot_kinds")
            assert list(rows.values_list("value", "clicks")) == [("other", 3)]
    finally:
        _migrate(_migrate_latest_targets())


def _migrate_latest_targets():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


@pytest.mark.django_db(transaction=True)
def test_periods_rolled_up_before_channels_read_as_clicks_on_the_short_link():
    """Every visit before QR codes carried their marker came through the short link: its
    periods get a "channels" row with their people's clicks (what their "devices" rows sum to),
    so an old week shows "Short link 100 %", not an empty or partial breakdown."""
    apps = _migrate([("analytics", "0005_dailybreakdown_by_value")])
    user = apps.get_model("auth", "User").objects.create(username="before-channels")
    link = apps.get_model("links", "UrlLink").objects.create(
        owner_id=user.pk,
        code="abc",
        long_url="https://example.com/",
        long_url_hash="h" * 40,
        code_type="custom",
    )
    apps.get_model("analytics", "VisitRecord").objects.create(
        link_id=link.pk, code="abc", event_id="e0", client_id="c0", visit_time=HOUR
    )
    for model_name, period in (("HourlyBreakdown", "hour"), ("DailyBreakdown", "day")):
        rows = apps.get_model("analytics", model_name).objects
        for dimension, value, clicks in [
            ("devices", "Mobile", 3),
            ("devices", "PC", 2),
            ("browsers", "Safari", 5),
            ("bots", "Googlebot", 4),
        ]:
            rows.create(
                link_id=link.pk, dimension=dimension, value=value, clicks=clicks, **{period: HOUR}
            )
    try:
        apps = _migrate([("analytics", "0006_visit_channel")])
        visits = apps.get_model("analytics", "VisitRecord")
        assert list(visits.objects.values_list("channel", flat=True)) == ["link"]
        for model_name in ("HourlyBreakdown", "DailyBreakdown"):
            rows = apps.get_model("analytics", model_name).objects.filter(dimension="channels")
            assert list(rows.values_list("value", "clicks")) == [("link", 5)]
    finally:
        _migrate(_migrate_latest_targets())


@pytest.mark.django_db(transaction=True)
def test_periods_rolled_up_before_destinations_read_as_clicks_to_the_long_url():
    """Before rules and variants every visit went to its link's long URL: periods rolled up
    before get a "destinations" row ("" = the long URL) with their people's clicks."""
    apps = _migrate([("analytics", "0007_visit_link_time_people")])
    user = apps.get_model("auth", "User").objects.create(username="before-destinations")
    link = apps.get_model("links", "UrlLink").objects.create(
        owner_id=user.pk,
        code="abd",
        long_url="https://example.com/",
        long_url_hash="h" * 40,
        code_type="custom",
    )
    apps.get_model("analytics", "VisitRecord").objects.create(
        link_id=link.pk, code="abd", event_id="e1", client_id="c1", visit_time=HOUR
    )
    for model_name, period in (("HourlyBreakdown", "hour"), ("DailyBreakdown", "day")):
        rows = apps.get_model("analytics", model_name).objects
        for dimension, value, clicks in [("devices", "Mobile", 3), ("devices", "PC", 2)]:
            rows.create(
                link_id=link.pk, dimension=dimension, value=value, clicks=clicks, **{period: HOUR}
            )
    try:
        apps = _migrate([("analytics", "0008_visit_destination")])
        visits = apps.get_model("analytics", "VisitRecord")
        assert list(visits.objects.values_list("destination", flat=True)) == [""]
        for model_name in ("HourlyBreakdown", "DailyBreakdown"):
            rows = apps.get_model("analytics", model_name).objects.filter(dimension="destinations")
            assert list(rows.values_list("value", "clicks")) == [("", 5)]
    finally:
        _migrate(_migrate_latest_targets())
