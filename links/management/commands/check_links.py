from django.core.management.base import BaseCommand, CommandError

from links.models import UrlLink
from links.services.health import link_destinations, link_health_sweep


class Command(BaseCommand):
    help = (
        "Check links' destinations now, one pass (the periodic job does the same in the "
        "background): the links whose turn has come, --code CODE's only, or --all active "
        "links. Prints each link's health and a summary; see docs/link-health.md."
    )

    def add_arguments(self, parser):
        parser.add_argument("--code", action="append", default=[], help="a link's code (again)")
        parser.add_argument("--all", action="store_true", help="every active link, due or not")

    def handle(self, *args, code, all, **options):
        links = None
        if code:
            links = list(UrlLink.objects.filter(code__in=code).order_by("id"))
            missing = set(code) - {link.code for link in links}
            if missing:
                raise CommandError(f"No link with the code {', '.join(sorted(missing))}.")
        elif all:
            links = UrlLink.objects.active().order_by("id").iterator()
        counts: dict[str, int] = {}

        def progress(link: UrlLink, health: str) -> None:
            counts[health] = counts.get(health, 0) + 1
            urls = len(link_destinations(link))
            line = f"{link.code}: {health} ({urls} destination{'s' if urls != 1 else ''})"
            if link.health_reason:
                line += f" {link.health_reason}"
            self.stdout.write(line)

        # A pass started by hand is not cut short by the background tick's limits.
        checked = link_health_sweep(
            links=links, max_seconds=float("inf"), max_links=10**9, progress=progress
        )
        summary = ", ".join(f"{count} {health}" for health, count in sorted(counts.items()))
        self.stdout.write(f"Checked {checked} link(s){': ' + summary if summary else ''}.")
