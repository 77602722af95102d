"""Delete old raw visits; the hourly counts (HourlyClick) stay, so charts keep their history."""

from django.core.management.base import BaseCommand, CommandError

from analytics import services


class Command(BaseCommand):
    help = "Delete VisitRecords older than DAYS days (hourly click counts are kept)."

    def add_arguments(self, parser):
        parser.add_argument("--older-than", type=int, required=True, metavar="DAYS")

    def handle(self, *args, older_than: int, **options):
        if older_than < 1:
            raise CommandError("--older-than must be at least 1 day")
        deleted = services.purge_visits(older_than_days=older_than)
        self.stdout.write(
            self.style.SUCCESS(f"Deleted {deleted} visit(s) older than {older_than} day(s).")
        )
