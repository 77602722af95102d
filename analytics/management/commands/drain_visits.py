"""Store every buffered visit and update the hourly counts now (tests, deploys, maintenance)."""

import time

from django.core.management.base import BaseCommand

from analytics import selectors, services


class Command(BaseCommand):
    help = "Flush the Redis visit buffer into VisitRecord and recompute the touched hours."

    def handle(self, *args, **options):
        started = time.perf_counter()
        stored = services.flush_pending(wait=True)
        flushed = time.perf_counter()
        rows = services.aggregate_hourly(wait=True)
        done = time.perf_counter()
        status = selectors.pipeline_status()
        rate = stored / (flushed - started) if stored else 0
        self.stdout.write(
            self.style.SUCCESS(
                f"Stored {stored} visit(s) in {flushed - started:.2f} s ({rate:,.0f}/s), "
                f"recomputed {rows} hourly row(s) in {done - flushed:.2f} s; "
                f"{status['buffered']} still buffered, {status['dead']} in the dead list."
            )
        )
