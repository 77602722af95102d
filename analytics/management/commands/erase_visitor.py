"""Erase one visitor's raw visits across a workspace (an erasure request): by the IP address as
stored or by the visitor id (client_id). Their clicks stay counted; nothing of theirs is left."""

from django.core.management.base import BaseCommand, CommandError

from analytics import services
from workspaces.models import Workspace


def visitor_arguments(parser) -> None:
    parser.add_argument("--workspace", required=True, metavar="SLUG")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--ip", default="", help="The address as stored (see docs/privacy.md).")
    which.add_argument("--visitor", default="", metavar="HASH", help="The visitor id (client_id).")


def workspace_named(slug: str) -> Workspace:
    try:
        return Workspace.objects.get(slug=slug)
    except Workspace.DoesNotExist:
        raise CommandError(f"No workspace {slug!r}.") from None


class Command(BaseCommand):
    help = "Erase every raw visit of one visitor (by --ip or --visitor) in a workspace's links."

    def add_arguments(self, parser):
        visitor_arguments(parser)

    def handle(self, *args, workspace: str, ip: str, visitor: str, **options):
        deleted = services.visitor_visits_erase(
            workspace=workspace_named(workspace), ip=ip, visitor=visitor
        )
        self.stdout.write(
            self.style.SUCCESS(
                f"Erased {deleted.visits:,} raw visit(s) of {deleted.links:,} link(s) in "
                f"{workspace}; their counts are kept."
            )
        )
