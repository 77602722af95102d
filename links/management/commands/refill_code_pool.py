from django.conf import settings
from django.core.management.base import BaseCommand

from links.codes import pool


class Command(BaseCommand):
    help = "Generate fresh codes into the pool (UniqueCode rows and the Redis set)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--count", type=int, default=None, help="How many codes (default SHORTURL_POOL_BATCH)."
        )
        parser.add_argument(
            "--reload-redis",
            action="store_true",
            help="Also hand every unused row back to the Redis set (after a Redis restart).",
        )

    def handle(self, *args, count=None, reload_redis=False, **options):
        total = count or settings.SHORTURL_POOL_BATCH

        def progress(done: int, wanted: int) -> None:
            self.stdout.write(f"\r  {done:>9,} / {wanted:,} codes", ending="")
            self.stdout.flush()

        self.stdout.write(f"Generating {total:,} codes…")
        stored = pool.pool_refill(batch=total, progress=progress)
        self.stdout.write("")
        if reload_redis:
            loaded = pool.pool_load_redis_from_db()
            self.stdout.write(f"Handed {loaded:,} unused codes to Redis.")
        status = pool.pool_status()
        self.stdout.write(
            self.style.SUCCESS(
                f"Stored {stored:,} new codes; pool now has {status['unused']:,} unused "
                f"({status['used']:,} used)."
            )
        )
