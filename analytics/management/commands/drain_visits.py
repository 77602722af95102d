"""Store every buffered visit and update the hourly counts now (tests, deploys, maintenance)."""

from django.core.management.base import BaseCommand

from analytics import selectors, services


class Command(BaseCommand):
    help = "Flush the Redis visit buffer into VisitRecord and recompute the touched hours."

    def handle(self, *args, **options):
        stored = services.flush_pending(wait=True)
        rows = services.aggregate_hourly(wait=True)
        status = selectors.pipeline_status()
        self.stdout.write(
            self.style.SUCCESS(
                f"Stored {stored} visit(s), recomputed {rows} hourly row(s); "
                f"{status['buffered']} still buffered, {status['dead']} in the dead list."
            )
        )
