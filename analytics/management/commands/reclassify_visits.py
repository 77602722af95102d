"""Run the bot, browser, OS and device detectors (and with --geo the GeoIP lookups) again over
stored visits, e.g. after upgrading the detector packages or the GeoIP data."""

from django.core.management.base import BaseCommand

from analytics import services
from analytics.management.cli import parse_since, progress_bar


class Command(BaseCommand):
    help = (
        "Re-run enrichment over stored visits and recompute the hourly counts and breakdowns "
        "of the hours whose visits changed."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--since",
            help="Only visits from this day on, YYYY-MM-DD (midnight in TIME_ZONE) or an ISO "
            "datetime. Default: every stored visit.",
        )
        parser.add_argument(
            "--geo",
            action="store_true",
            help="Also look up place and network again (from the stored address; with "
            "ANONYMIZE_IP that is the visitor's network, not the full address).",
        )
        parser.add_argument("--batch-size", type=int, default=2000, help="Visits per update.")

    def handle(self, *args, since: str | None, geo: bool, batch_size: int, **options):
        moment = parse_since(since) if since else None
        result = services.reclassify_visits(
            since=moment, geo=geo, batch_size=batch_size, progress=progress_bar(self, "visits")
        )
        self.stdout.write("")
        self.stdout.write(
            self.style.SUCCESS(
                f"Examined {result.examined:,} visit(s): {result.changed:,} changed, "
                f"{result.hours:,} hourly row(s) recomputed."
            )
        )
