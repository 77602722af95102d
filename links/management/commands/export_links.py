from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError

from links.imports.exports import EXPORT_FORMATS, write_links_csv, write_links_json
from links.management.short_url_base import add_base_argument, checked_base
from links.selectors import link_export_rows
from workspaces.selectors import WorkspaceNotFound, workspace_get


class _Raw:
    """The command's stdout as a plain text stream (OutputWrapper adds line endings)."""

    def __init__(self, wrapper):
        self.wrapper = wrapper

    def write(self, text: str) -> None:
        self.wrapper.write(text, ending="")


class Command(BaseCommand):
    help = (
        "Export a user's links (every link with --all, for staff) as CSV or JSON: code, "
        "short_url, long_url, title, tags, domain, created_at, valid_since, expires_at, status, "
        "archived, clicks, unique_visitors, og_title, og_description, og_image, expired_url, "
        "ios_url, android_url, fallback_url, health. import_links reads both back (health is "
        "the checker's to find again). Short URLs are full: --base's, "
        "else SHORT_URL_BASE's."
    )

    def add_arguments(self, parser):
        parser.add_argument("--user", required=True, help="username whose links are exported")
        parser.add_argument(
            "--all",
            action="store_true",
            dest="everyone",
            help="every owner's links (the user must be staff); adds an owner column",
        )
        parser.add_argument(
            "--workspace",
            default=None,
            help="slug of the workspace whose links are exported (the user must be a member; "
            "default: the user's personal workspace)",
        )
        parser.add_argument("--format", default="csv", choices=EXPORT_FORMATS)
        add_base_argument(parser, needed_for="the export")
        parser.add_argument("--output", default=None, help="a file to write (default: stdout)")

    def handle(
        self,
        *args,
        user: str,
        everyone: bool,
        workspace: str | None,
        format: str,
        output: str | None,
        base: str,
        **_,
    ):
        base = checked_base(base, needed_for="the export")
        model = get_user_model()
        try:
            owner = model._default_manager.get(**{model.USERNAME_FIELD: user})
        except model.DoesNotExist:
            raise CommandError(f"There is no user “{user}”.") from None
        workspace_id = None
        if workspace:
            try:
                workspace_id = workspace_get(user=owner, slug=workspace).pk
            except WorkspaceNotFound:
                raise CommandError(f"{user} is in no workspace “{workspace}”.") from None
        write = write_links_json if format == "json" else write_links_csv
        try:
            records = link_export_rows(
                user=owner, everyone=everyone, workspace_id=workspace_id, base=base
            )
            if output:
                with Path(output).open("w", newline="", encoding="utf-8") as out:
                    count = write(records, out)
            else:
                count = write(records, _Raw(self.stdout))
        except PermissionDenied as error:
            raise CommandError(str(error)) from None
        except OSError as error:
            raise CommandError(f"Cannot write {output}: {error.strerror or error}.") from None
        where = output or "standard output"
        self.stderr.write(f"Exported {count:,} link{'s' if count != 1 else ''} to {where}.")
