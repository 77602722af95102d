import sys
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count

from links.domains import WELL_KNOWN_PATHS, host_form
from links.models import Domain
from links.selectors import default_domain_host
from links.services.domains import KEEP_WORKSPACE, domain_delete, domain_save
from workspaces.models import Workspace


def _refusal(error: ValidationError) -> str:
    """The service's reasons; an app-association file's named by its option (its JSON error
    alone would not say which file)."""
    if not hasattr(error, "error_dict"):
        return " ".join(error.messages)
    return " ".join(
        f"--{field.replace('_', '-')}: {message}" if field in WELL_KNOWN_PATHS else message
        for field, messages in error.message_dict.items()
        for message in messages
    )


class Command(BaseCommand):
    help = (
        "List, add, change or remove the extra short domains links can be put on (the admin's "
        "Short domains page does the same). Each needs DNS pointing here and its host in "
        "ALLOWED_HOSTS for its password pages. --apple-app-site-association and --assetlinks "
        "set the app-association files it serves (a file's path, - for stdin, '' for none)."
    )

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        actions.add_parser("list", help="every domain with its links and redirects")
        for name, text in (
            ("add", "add a domain"),
            ("set", "change a domain's redirects or workspace"),
        ):
            action = actions.add_parser(name, help=text)
            action.add_argument("host", help="e.g. go.example.com")
            action.add_argument(
                "--root-redirect", default=None, help="where https://<host>/ sends visitors"
            )
            action.add_argument(
                "--not-found-redirect", default=None, help="where unknown codes send visitors"
            )
            action.add_argument(
                "--expired-redirect",
                default=None,
                help="where expired, revoked and limit-reached links without a fallback of "
                'their own send visitors ("": the 410 page)',
            )
            action.add_argument(
                "--apple-app-site-association",
                metavar="FILE",
                default=None,
                help=f"the JSON file to serve at {WELL_KNOWN_PATHS['apple_app_site_association']} "
                '(- : stdin; "": none, 404)',
            )
            action.add_argument(
                "--assetlinks",
                metavar="FILE",
                default=None,
                help=f"the JSON file to serve at {WELL_KNOWN_PATHS['assetlinks']} "
                '(- : stdin; "": none, 404)',
            )
            action.add_argument(
                "--workspace",
                default=None,
                help='keep the domain for this workspace\'s links (its slug; "": every '
                "workspace's, the default)",
            )
        remove = actions.add_parser("remove", help="remove a domain that has no links")
        remove.add_argument("host")

    def handle(self, *args, action: str, **options):
        try:
            if action == "list":
                self._list()
            elif action == "remove":
                domain_delete(domain=self._domain(options["host"]))
                self.stdout.write(f"Removed {options['host']}.")
            else:
                self._save(action, options)
        except ValidationError as error:
            raise CommandError(_refusal(error)) from None

    def _domain(self, host: str) -> Domain:
        # Found by any spelling `add` takes (a URL, any case, Unicode, a final dot).
        domain = Domain.objects.filter(host=host_form(host)).exclude(host="").first()
        if domain is None:
            raise CommandError(f"There is no domain {host}; `domains list` shows them.")
        return domain

    def _save(self, action: str, options: dict) -> None:
        existing = self._domain(options["host"]) if action == "set" else None
        root, not_found = options["root_redirect"], options["not_found_redirect"]
        domain = domain_save(
            domain=existing,
            host=options["host"],
            root_redirect=root if root is not None else getattr(existing, "root_redirect", ""),
            not_found_redirect=(
                not_found if not_found is not None else getattr(existing, "not_found_redirect", "")
            ),
            workspace=self._workspace(options["workspace"]),
            expired_redirect=options["expired_redirect"],  # None: as it is
            **{field: self._file_text(options[field]) for field in WELL_KNOWN_PATHS},
        )
        self.stdout.write(f"{'Added' if existing is None else 'Changed'} {domain.host}.")

    def _file_text(self, given: str | None) -> str | None:
        """An association option's text: None (not given) keeps the domain's, "" clears it,
        "-" reads stdin, anything else is a file's path. links.services.app_links checks it."""
        if given is None or not given.strip():
            return given
        if given == "-":
            return sys.stdin.read()
        try:
            return Path(given).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"Cannot read {given}: {error}") from None

    def _workspace(self, slug: str | None):
        """--workspace: None (not given) keeps what the domain has; "" frees it."""
        if slug is None:
            return KEEP_WORKSPACE
        if not slug.strip():
            return None
        workspace = Workspace.objects.filter(slug=slug.strip().lower()).first()
        if workspace is None:
            raise CommandError(f"There is no workspace {slug}.")
        return workspace

    def _list(self) -> None:
        domains = Domain.objects.select_related("workspace").annotate(n=Count("links"))
        for domain in domains.order_by("host"):
            name = domain.host or f"{default_domain_host() or '(the site’s own host)'} [default]"
            root = "(the site’s home page)" if domain.is_default else "(404 page)"
            kept = f"; kept for {domain.workspace.slug}" if domain.workspace else ""
            self.stdout.write(
                f"{name}: {domain.n} link(s); root → {domain.root_redirect or root}; "
                f"unknown codes → {domain.not_found_redirect or '(404 page)'}; "
                f"stopped links → {domain.expired_redirect or '(410 page)'}; "
                f"app files → {', '.join(domain.served_files) or 'none'}{kept}"
            )
