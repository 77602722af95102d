"""Recompute HourlyClick rows from the stored visits, e.g. after a restore or a bot-rule change."""

import datetime as dt

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from analytics import services

_BAR = 30


class Command(BaseCommand):
    help = "Recompute hourly click counts from VisitRecord for every hour since DATE."

    def add_arguments(self, parser):
        parser.add_argument(
            "--since",
            required=True,
            help="First day to rebuild, YYYY-MM-DD (midnight in TIME_ZONE) or an ISO datetime.",
        )

    def handle(self, *args, since: str, **options):
        try:
            moment = dt.datetime.fromisoformat(since)
        except ValueError:
            raise CommandError(f"--since {since!r} is not a date like 2024-05-01") from None
        if timezone.is_naive(moment):
            moment = timezone.make_aware(moment)

        def progress(done: int, total: int) -> None:
            filled = round(_BAR * done / total)
            self.stdout.write(
                f"\r[{'#' * filled}{'.' * (_BAR - filled)}] day {done}/{total}", ending=""
            )
            self.stdout.flush()

        rows = services.rebuild_hourly(since=moment, progress=progress)
        self.stdout.write("")
        self.stdout.write(self.style.SUCCESS(f"Rebuilt {rows} hourly row(s) since {moment}."))
