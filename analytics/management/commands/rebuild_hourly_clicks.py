"""Recompute HourlyClick rows from the stored visits, e.g. after a restore or a bot-rule change."""

from django.core.management.base import BaseCommand

from analytics import services
from analytics.management.cli import parse_since, progress_bar


class Command(BaseCommand):
    help = "Recompute hourly click counts from VisitRecord for every hour since DATE."

    def add_arguments(self, parser):
        parser.add_argument(
            "--since",
            required=True,
            help="First day to rebuild, YYYY-MM-DD (midnight in TIME_ZONE) or an ISO datetime.",
        )

    def handle(self, *args, since: str, **options):
        moment = parse_since(since)
        rows = services.rebuild_hourly(since=moment, progress=progress_bar(self, "day"))
        self.stdout.write("")
        self.stdout.write(self.style.SUCCESS(f"Rebuilt {rows} hourly row(s) since {moment}."))
