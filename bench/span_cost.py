"""CPU cost of the largest time span each stats family accepts (security round 3, finding 2).

In-process, embedded mode: a throw-away SQLite database in a temporary directory, migrated, one
link made on 2000-01-01 with a visit by one of 24 people every hour of the last 366 days and
one every day since 2000 (~18,600 visits), rolled up by the product's own `rebuild_hourly`, and
a tag on it and on a second link never clicked (a tag's people are counted from the visits,
hour by hour too). Then each request goes through Django's test client (the whole stack: auth,
throttles, views, serializers, the database), `--reps` times, and the CPU time of this process
(time.process_time: the server's work and SQLite's, nothing else runs here) is printed per
request: median and max. Nothing is left behind, unless `--db` names where to keep the seeded
database (seeding takes ~10 minutes; a later run with the same `--db` reuses it).

    .venv/bin/python bench/span_cost.py [--reps 3] [--only SUBSTRING] [--root CHECKOUT] [--db F]

`--root` runs the same requests against another checkout (e.g. one before the span limits).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

PEOPLE = 24
HERE = Path(__file__).resolve().parent


def _setup(root: Path, workdir: Path, db: Path) -> None:
    os.environ.update(
        DATABASE_URL=f"sqlite:///{db}",
        NODE_STATE_DIR=str(workdir / "node-state"),
        SHOW_DEV_WARNING="0",
        DEBUG="0",
        SECRET_KEY="bench-span-cost-" + "x" * 40,
        ALLOWED_HOSTS="testserver",
    )
    for name in ("REDIS_URL", "CELERY_BROKER_URL"):
        os.environ.pop(name, None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "shorturl_project.settings"
    sys.path.insert(0, str(root))
    sys.path.append(str(HERE.parent / "e2e"))  # this checkout's list of requests (harness.py)
    os.chdir(root)
    import django

    django.setup()
    from django.db.backends.signals import connection_created

    def unsynced(connection, **kwargs):  # a throw-away database: no fsync per transaction
        connection.cursor().execute("PRAGMA synchronous=OFF")

    connection_created.connect(unsynced, weak=False)


def _seed() -> dict:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from analytics.models import VisitRecord
    from analytics.services import rebuild_hourly
    from links.models import UrlLink
    from links.services.create import link_create

    call_command("migrate", verbosity=0)
    existing = UrlLink.objects.filter(tags__name="spans").order_by("pk").first()
    if existing is not None:
        owner = existing.owner
        # A tag of two links: its people are counted from the visits, hour by hour too.
        if UrlLink.objects.filter(tags__name="spans").count() < 2:
            link_create(user=owner, long_url="https://example.com/spans-2", tags=["spans"])
        token = Token.objects.get(user=owner).key
        return {"code": existing.code, "token": token, "owner": owner}
    owner = get_user_model().objects.create_user("bench", is_staff=True)
    token = Token.objects.create(user=owner).key
    link = link_create(user=owner, long_url="https://example.com/spans", tags=["spans"]).link
    first = datetime(2000, 1, 1, tzinfo=UTC)
    UrlLink.objects.filter(pk=link.pk).update(created_at=first)
    link_create(user=owner, long_url="https://example.com/spans-2", tags=["spans"])
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    moments = [now - timedelta(hours=h) for h in range(366 * 24)]
    day = first + timedelta(hours=12)
    while day < now - timedelta(days=366):
        moments.append(day)
        day += timedelta(days=1)
    VisitRecord.objects.bulk_create(
        [
            VisitRecord(
                link_id=link.pk,
                code=link.code,
                event_id=hashlib.sha1(str(n).encode()).hexdigest()[:32],  # noqa: S324
                client_id=hashlib.sha1(str(n % PEOPLE).encode()).hexdigest(),  # noqa: S324
                visit_time=moment,
                country="Germany",
                country_code="DE",
                browser_type="Chrome",
                os_type="Android",
                device_type="Mobile",
            )
            for n, moment in enumerate(moments)
        ],
        batch_size=2000,
    )
    started = time.monotonic()
    rebuild_hourly(since=first)
    print(f"seeded {len(moments):,} visits, rolled up in {time.monotonic() - started:.0f} s")
    return {"code": link.code, "token": token, "owner": owner}


def _requests(code: str) -> list[tuple[str, str, dict, str]]:
    """(what, path, params, who): the audit's request, then the largest span each family accepts
    today, the same requests e2e/test_span_limits.py measures over HTTP (e2e/harness.py)."""
    from harness import largest_spans

    audit = ("Bitly 10,000 months (the audit's)", f"/v4/bitlinks/bit.ly/{code}/clicks")
    return [(*audit, {"unit": "month", "units": 10000}, "bitly"), *largest_spans(code, "spans")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--only", default="")
    parser.add_argument("--root", type=Path, default=HERE.parent)
    parser.add_argument("--db", type=Path, help="keep the seeded SQLite database here")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="span-cost-"))
    try:
        _setup(args.root.resolve(), workdir, (args.db or workdir / "db.sqlite3").resolve())
        from django.core.cache import cache
        from django.test import Client

        seeded = _seed()
        clients = {
            "bitly": Client(HTTP_AUTHORIZATION=f"Bearer {seeded['token']}"),
            "token": Client(HTTP_AUTHORIZATION=f"Token {seeded['token']}"),
            "shlink": Client(HTTP_X_API_KEY=seeded["token"]),
            "owner": Client(),  # the link's owner is staff too: also the overview's
        }
        clients["owner"].force_login(seeded["owner"])
        clients["staff"] = clients["owner"]
        print(f"{'request':40} {'status':>6} {'CPU median':>11} {'CPU max':>8}")
        for what, path, params, who in _requests(seeded["code"]):
            if args.only and args.only.lower() not in what.lower():
                continue
            costs, status = [], 0
            for _ in range(args.reps):
                cache.clear()  # the throttles' counts, and no cached people between reps
                started = time.process_time()
                response = clients[who].get(path, params)
                if response.streaming:
                    for _chunk in response.streaming_content:
                        pass
                costs.append(time.process_time() - started)
                status = response.status_code
            median = statistics.median(costs)
            print(f"{what:40} {status:>6} {median:>10.3f}s {max(costs):>7.3f}s", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
