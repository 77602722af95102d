"""One retention pass now (the apply-retention job runs the same every
ANALYTICS_RETENTION_SECONDS): raw visits past each workspace's retention deleted, counts kept."""

from django.core.management.base import BaseCommand, CommandError

from analytics import services


class Command(BaseCommand):
    help = (
        "Delete raw visits older than each workspace's retention (its own days, else "
        "ANALYTICS_RAW_RETENTION_DAYS); totals, unique visitors, charts and breakdowns are kept."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--days",
            type=int,
            metavar="DAYS",
            help="Keep this many days in every workspace, for this pass (0: delete them all).",
        )

    def handle(self, *args, days: int | None, **options):
        if days is not None and days < 0:
            raise CommandError("--days must be 0 or more")

        def progress(slug: str, deleted: int) -> None:
            self.stderr.write(f"{slug}: {deleted:,} raw visit(s) deleted so far")

        result = services.apply_retention(days=days, progress=progress)
        for slug, deleted in sorted(result.workspaces.items()):
            self.stdout.write(f"{slug}: {deleted:,}")
        self.stdout.write(
            self.style.SUCCESS(
                f"Deleted {result.visits:,} raw visit(s) in {len(result.workspaces)} "
                "workspace(s); every count they made is kept."
            )
        )
