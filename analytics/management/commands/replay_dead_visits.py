"""Send the visits in the dead list through the pipeline again, after the fix that lets them
be stored (analytics.services.replay_dead_visits)."""

from django.core.management.base import BaseCommand, CommandError

from analytics import buffer, services
from analytics.management.cli import progress_bar


class Command(BaseCommand):
    help = (
        "Move the messages of the Redis dead list that can be read now back into the visit "
        "buffer, store them, and say how many were stored and how many are still bad."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Only count the messages that would be replayed; change nothing.",
        )

    def handle(self, *args, dry_run: bool, **options):
        try:
            result = services.replay_dead_visits(
                dry_run=dry_run, progress=progress_bar(self, "messages")
            )
        except services.NoVisitBuffer:
            raise CommandError(
                "There is no Redis (REDIS_URL is unset), so no dead list: the embedded mode "
                "logs a visit it cannot store instead."
            ) from None
        except buffer.LockBusy as exc:
            raise CommandError(f"Not now: {exc}.") from None
        self.stdout.write("")
        if dry_run:
            self.stdout.write(
                f"{result.examined:,} message(s) in the dead list: {result.replayable:,} can be "
                f"replayed, {result.unreadable:,} still unreadable. Nothing was changed."
            )
            return
        not_stored = result.replayable - result.stored
        self.stdout.write(
            self.style.SUCCESS(
                f"Replayed {result.replayable:,} message(s): {result.stored:,} stored "
                f"({result.new:,} new), {not_stored:,} not stored; "
                f"{result.unreadable:,} left in the dead list."
            )
        )
        if not_stored:
            self.stdout.write(
                "Not stored: their link was deleted, or the database refused them again (then "
                "they are back in the dead list; the worker's log says why)."
            )
