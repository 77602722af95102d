import sys
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError

from core.progress import Progress
from links.imports.exports import write_import_report_csv
from links.imports.formats import FORMATS, ImportFileError, parse_file
from links.imports.report import Outcome
from links.imports.rows import ON_TAKEN_CODE_CHOICES
from links.imports.service import link_import
from links.management.short_url_base import add_base_argument, checked_base

# Rows listed on the terminal per outcome; the --report file has them all.
LISTED = 50


class Command(BaseCommand):
    help = (
        "Import links from another shortener's export into a user's links: Bitly (CSV, API "
        "JSON), YOURLS (SQL dump, CSV), Kutt and Shlink (API JSON; Shlink's CSV too), a plain "
        "CSV (long_url, alias, title, tags) or this service's own export. Old codes are kept "
        "when free; every row is reported: imported, imported with a new code, or skipped, "
        "with why. The exit status is 1 only when the file cannot be read at all."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the file to read; - reads standard input")
        parser.add_argument("--user", required=True, help="username of the links' owner")
        parser.add_argument(
            "--workspace",
            default=None,
            help="slug of the workspace the links go to (the user must be an owner or editor "
            "there; default: the user's personal workspace)",
        )
        parser.add_argument(
            "--format",
            default="auto",
            choices=["auto", *FORMATS],
            help="the file's format (default: told from its content)",
        )
        parser.add_argument(
            "--domain",
            default=None,
            help="put every link on this short domain (default: each link's own old domain "
            "when it is one of this service's, else the default domain)",
        )
        parser.add_argument(
            "--on-taken-code",
            default="new",
            choices=ON_TAKEN_CODE_CHOICES,
            help="an old code that cannot be kept (taken, reserved, of the generated codes' "
            "shape…): import the link with a new code (default) or skip it",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="check and report without writing anything"
        )
        parser.add_argument(
            "--report",
            default=None,
            help="write every row's outcome to this CSV, with each link's full short URL",
        )
        add_base_argument(parser, needed_for="the --report file")

    def handle(self, *args, **options):
        # Checked before anything is imported: a report of paths is found out too late.
        base = ""
        if options["report"] or options["base"]:
            base = checked_base(options["base"], needed_for="the --report file")
        data = self._read(options["file"])
        try:
            parsed = parse_file(data, options["format"])
        except ImportFileError as error:
            raise CommandError(f"{options['file']}: {error}") from None
        user = self._user(options["user"])
        label = FORMATS[parsed.format].label
        self.stdout.write(
            f"Reading {options['file']} as {label}: {len(parsed.rows):,} link"
            f"{'s' if len(parsed.rows) != 1 else ''}"
            + (" (dry run: nothing will be written)" if options["dry_run"] else "")
            + "."
        )
        progress = Progress(self.stderr, "rows")
        try:
            report = link_import(
                user=user,
                parsed=parsed,
                domain=options["domain"],
                on_taken_code=options["on_taken_code"],
                dry_run=options["dry_run"],
                progress=progress,
                workspace=options["workspace"],
            )
        except (ValidationError, PermissionDenied) as error:
            messages = error.messages if isinstance(error, ValidationError) else [str(error)]
            raise CommandError(" ".join(messages)) from None
        finally:
            progress.finish()
        self._list(report, Outcome.NEW_CODE, "Imported with a new code")
        self._list(report, Outcome.SKIPPED, "Skipped")
        if options["report"]:
            with Path(options["report"]).open("w", newline="", encoding="utf-8") as out:
                write_import_report_csv(report, out, base=base)
            self.stdout.write(f"Every row's outcome is in {options['report']}.")
        style = self.style.SUCCESS if report.imported or not report.entries else self.style.WARNING
        self.stdout.write(style(report.summary()))
        if options["dry_run"]:
            self.stdout.write("Dry run: nothing was written.")

    def _user(self, name: str):
        model = get_user_model()
        try:
            return model._default_manager.get(**{model.USERNAME_FIELD: name})
        except model.DoesNotExist:
            raise CommandError(f"There is no user “{name}”.") from None

    def _read(self, name: str) -> bytes:
        if name == "-":
            return sys.stdin.buffer.read()
        try:
            return Path(name).read_bytes()
        except OSError as error:
            raise CommandError(f"Cannot read {name}: {error.strerror or error}.") from None

    def _list(self, report, outcome: str, heading: str) -> None:
        entries = [entry for entry in report.entries if entry.outcome == outcome]
        if not entries:
            return
        self.stdout.write(f"{heading}:")
        for entry in entries[:LISTED]:
            what = entry.old_code or entry.long_url[:80] or "(empty)"
            if entry.outcome == Outcome.NEW_CODE:
                what += f" → {entry.code}" if entry.code else " → (a new code)"
            self.stdout.write(f"  {report.unit} {entry.row}: {what}: {entry.reason}")
        if len(entries) > LISTED:
            more = len(entries) - LISTED
            self.stdout.write(f"  … and {more:,} more (--report FILE lists every row).")
