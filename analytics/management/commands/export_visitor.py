"""One visitor's raw visits in a workspace as CSV on stdout (an access request)."""

from django.core.management.base import BaseCommand

from analytics import selectors
from analytics.management.commands.erase_visitor import visitor_arguments, workspace_named


class Command(BaseCommand):
    help = "Write every stored raw visit of one visitor (by --ip or --visitor) as CSV."

    def add_arguments(self, parser):
        visitor_arguments(parser)

    def handle(self, *args, workspace: str, ip: str, visitor: str, **options):
        rows = selectors.visitor_visits_export(
            workspace=workspace_named(workspace), ip=ip, visitor=visitor
        )
        lines = -1  # the header's
        for line in selectors.visitor_visits_csv_chunks(rows):
            self.stdout.write(line, ending="")
            lines += 1
        self.stderr.write(f"{lines:,} visit(s).")
