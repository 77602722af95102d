"""What one live-totals read costs (issue #29): the query every open stats page makes each second
(analytics.selectors.live_totals), for a link whose newest hour holds 1,000, 10,000 and 100,000
visits not yet read from HourlyClick, beside 30 days of rolled-up hours.

Runs against the database DATABASE_URL names (SQLite or MariaDB), which must be a throw-away one:
it migrates it, adds a user, a link per size and their rows (multi-row INSERTs straight into
VisitRecord and HourlyClick), times `live_totals` `--reps` times per link, prints the median and
p95 with the query plan's use of the indexes, and deletes what it added.

    DATABASE_URL=mysql://root@127.0.0.1:3306/scratch .venv/bin/python bench/live_bench.py
    DATABASE_URL=sqlite:////tmp/scratch.db .venv/bin/python bench/live_bench.py [--reps 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shorturl_project.settings")

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from analytics.models import HourlyClick, VisitRecord, utc_hour  # noqa: E402
from analytics.selectors import live_totals  # noqa: E402
from analytics.selectors.live import SETTLE  # noqa: E402
from links.services.create import link_create  # noqa: E402

SIZES = (1_000, 10_000, 100_000)
DAYS = 30


def _fill(link, visits: int) -> None:
    now = datetime.now(UTC)
    newest = utc_hour(now - SETTLE)  # live_totals counts the visits from here
    span = max((now - newest).total_seconds() - 1, 1)
    rows = [
        VisitRecord(
            link=link,
            code=link.code,
            event_id=uuid.uuid4().hex,
            client_id=uuid.uuid4().hex,
            visit_time=newest + timedelta(seconds=span * n / visits),
            is_bot=n % 20 == 0,
        )
        for n in range(visits)
    ]
    VisitRecord.objects.bulk_create(rows, batch_size=2000)
    hours = [
        HourlyClick(link=link, hour=newest - timedelta(hours=h), clicks=40, bot_clicks=2)
        for h in range(1, DAYS * 24)
    ]
    HourlyClick.objects.bulk_create(hours, batch_size=2000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user(f"live-bench-{uuid.uuid4().hex[:8]}")
    start = datetime.now(UTC) - timedelta(days=DAYS)
    print(f"{connection.vendor}, {DAYS} days of hours per link, {args.reps} reads each")
    try:
        for size in SIZES:
            link = link_create(user=user, long_url=f"https://example.com/live-{size}").link
            _fill(link, size)
            figures = live_totals(link_ids=[link.pk], start=start)
            times = []
            for _ in range(args.reps):
                began = time.perf_counter()
                live_totals(link_ids=[link.pk], start=start)
                times.append(time.perf_counter() - began)
            times.sort()
            p95 = times[int(len(times) * 0.95) - 1]
            print(
                f"{size:>7,} visits in the newest hour: median "
                f"{statistics.median(times) * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms "
                f"(clicks {figures['clicks']:,}, bots {figures['bot_clicks']:,})"
            )
    finally:
        VisitRecord.objects.filter(link__owner=user).delete()
        HourlyClick.objects.filter(link__owner=user).delete()
        user.delete()


if __name__ == "__main__":
    main()
