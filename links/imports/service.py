"""Importing links from another shortener's file (links.imports.formats reads it): every row goes
through link_create_many, so URLs, aliases, tags, domains and every other rule are the ones the
form and the API apply; this module only decides, row by row, what to ask of it and says what
became of each row.

- An old code is kept (as the link's alias) when it is a valid alias and free on the link's
  domain. One that cannot be kept (taken by someone else, reserved, too short, of the generated
  codes' shape…) gets a new code (`on_taken_code="new"`, the default: the link survives, its
  short URL changes) or its row is skipped (`"skip"`); the report says which and why.
- Nothing is imported twice: a code that is already the owner's link on that domain is
  "already exists", and a row that would need a new code is not imported when the owner already
  has an active link to its URL on that domain, or when an earlier row of the file had it.
- Rows go in batches of BULK_MAX_ITEMS, one transaction each: an import stopped half-way keeps
  the batches done, and running it again reports them as already existing.
- A dry run applies the same checks without writing anything (no code is claimed).

`user` owns the imported links: the seam where a workspace will come in.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sized
from dataclasses import asdict, dataclass, field
from itertools import islice

from celery import current_app
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import DatabaseError, connections, transaction
from django.template.defaultfilters import filesizeformat
from django.utils import timezone

from links.codes.aliases import validate_alias
from links.imports.formats import (
    FORMATS,
    ImportFileError,
    ParsedFile,
    SourceRow,
    decode,
    detect_format,
    no_links_error,
    open_file,
)
from links.models import DEFAULT_DOMAIN_ID, IMPORT_STALE_AFTER, ImportStatus, LinkImport, UrlLink
from links.services.bulk import BULK_MAX_ITEMS, link_create_many
from links.services.create import prepare_link
from links.services.domains import domain_for_create
from links.services.policy import LongUrlRules, is_storable_text, url_hash, validate_title
from links.services.tags import MAX_TAGS_PER_LINK, clean_tags, tag_key
from workspaces.models import Workspace
from workspaces.services import workspace_for_writing

logger = logging.getLogger("shorturl.imports")

ON_TAKEN_CODE_CHOICES = ("new", "skip")


class Outcome:
    IMPORTED = "imported"  # with its old code, or with a new one when it had none
    NEW_CODE = "new code"  # its old code could not be kept (`reason` says why)
    SKIPPED = "skipped"


OUTCOMES = (Outcome.IMPORTED, Outcome.NEW_CODE, Outcome.SKIPPED)

# Why a row was skipped, for the summary's counts.
SKIP_KINDS = {
    "exists": "already in the links",
    "duplicate": "repeated in the file",
    "refused": "refused by the link rules",
    "code": "old code not kept",
    "source": "left out by the source",
    "unreadable": "unreadable",
}


# How much of a row's text a report keeps: enough to tell the row, never a whole 100 KB cell.
_REPORT_TEXT_LIMITS = {"long_url": 1000, "reason": 2000, "old_code": 200, "code": 200}


def _report_text(value: str, limit: int) -> str:
    """Text a report can be stored, shown and downloaded with: a lone surrogate (a JSON
    "\\ud800" escape) written as that escape, as no page or CSV can be encoded with it; a NUL
    written as \\x00; cut to `limit` characters."""
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    if not is_storable_text(value):
        value = value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value.replace("\x00", "\\x00")


@dataclass
class ImportEntry:
    """What became of one row of the file."""

    row: int
    outcome: str  # Outcome.*
    long_url: str
    old_code: str = ""
    code: str = ""  # the link's code here: new, or the existing link's when it already exists
    domain: str = ""  # the link's short domain's host; "" for the default domain
    reason: str = ""  # why skipped or why a new code; notes for imported rows
    kind: str = ""  # for skipped rows: a SKIP_KINDS key

    def __post_init__(self) -> None:
        # The file's text comes back in the report: every entry, new or read from a stored
        # report made before this rule, holds only text the pages and the CSV can write.
        for name, limit in _REPORT_TEXT_LIMITS.items():
            setattr(self, name, _report_text(getattr(self, name) or "", limit))


@dataclass
class ImportReport:
    """Every row's outcome counted; the first `keep` rows of each outcome kept with what became
    of them (None: all of them, as the import_links command keeps), so that a report stays a few
    megabytes whatever the file holds."""

    format: str
    unit: str  # "line" or "item": what ImportEntry.row counts
    dry_run: bool = False
    entries: list[ImportEntry] = field(default_factory=list)
    keep: int | None = None
    # Rows by outcome, by "skipped:<kind>" and "imported:old code" (the IMPORTED rows that kept
    # their old code), whether or not they are in `entries`.
    tally: dict[str, int] = field(default_factory=dict)

    def add(self, entry: ImportEntry) -> None:
        keys = [entry.outcome]
        if entry.outcome == Outcome.SKIPPED:
            keys.append(f"{Outcome.SKIPPED}:{entry.kind}")
        elif entry.outcome == Outcome.IMPORTED and entry.old_code:
            keys.append(f"{Outcome.IMPORTED}:old code")
        if self.keep is None or self.tally.get(entry.outcome, 0) < self.keep:
            self.entries.append(entry)
        for key in keys:
            self.tally[key] = self.tally.get(key, 0) + 1

    def count(self, outcome: str, kind: str | None = None) -> int:
        return self.tally.get(outcome if kind is None else f"{outcome}:{kind}", 0)

    @property
    def rows(self) -> int:
        return sum(self.count(outcome) for outcome in OUTCOMES)

    @property
    def partial(self) -> bool:
        """Whether some rows are counted but not listed."""
        return len(self.entries) < self.rows

    @property
    def imported(self) -> int:
        """Links created, with their old code or a new one."""
        return self.count(Outcome.IMPORTED) + self.count(Outcome.NEW_CODE)

    def skipped_by_kind(self) -> dict[str, int]:
        prefix = f"{Outcome.SKIPPED}:"
        return {
            key.removeprefix(prefix): count
            for key, count in self.tally.items()
            if key.startswith(prefix)
        }

    def summary(self) -> str:
        """One sentence: `Imported 12 links (10 with their old codes, 2 with new codes); skipped
        3 (2 already in the links, 1 refused by the link rules).`"""
        verb = "Would import" if self.dry_run else "Imported"
        new = self.count(Outcome.NEW_CODE)
        kept = self.count(Outcome.IMPORTED, "old code")
        fresh = self.count(Outcome.IMPORTED) - kept
        parts = []
        if kept:
            parts.append(f"{kept:,} with {'its' if kept == 1 else 'their'} old code{_s(kept)}")
        if new:
            parts.append(f"{new:,} with {'a new code' if new == 1 else 'new codes'}")
        if fresh:
            parts.append(f"{fresh:,} without an old code")
        text = f"{verb} {self.imported:,} link{_s(self.imported)}"
        if parts and self.imported:
            text += f" ({', '.join(parts)})"
        skipped = self.skipped_by_kind()
        if skipped:
            total = sum(skipped.values())
            kinds = ", ".join(f"{n:,} {SKIP_KINDS.get(kind, kind)}" for kind, n in skipped.items())
            text += f"; skipped {total:,} ({kinds})"
        return text + "."

    def as_dict(self) -> dict:
        return {
            "format": self.format,
            "unit": self.unit,
            "dry_run": self.dry_run,
            "keep": self.keep,
            "tally": self.tally,
            "entries": [asdict(entry) for entry in self.entries],
        }

    @classmethod
    def from_dict(cls, data: dict) -> ImportReport:
        report = cls(
            format=data["format"],
            unit=data["unit"],
            dry_run=data.get("dry_run", False),
            keep=data.get("keep"),
        )
        entries = (ImportEntry(**entry) for entry in data.get("entries", []))
        if "tally" in data:
            report.entries = list(entries)
            report.tally = dict(data["tally"])
        else:  # stored before reports were counted
            for entry in entries:
                report.add(entry)
        return report


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def _messages(errors: dict[str, list[str]]) -> str:
    """A service's {field: [messages]} as one line; the field named where the message does not
    make it plain."""
    labels = {"long_url": "", "alias": "", "domain": ""}
    parts = []
    for name, messages in errors.items():
        label = labels.get(name, name.replace("_", " "))
        text = " ".join(messages)
        parts.append(f"{label}: {text}" if label else text)
    return " ".join(parts)


def _fit_title(title: str, notes: list[str]) -> str:
    """The title the rules take: a long one shortened, one that is not text dropped (noted)."""
    try:
        return validate_title(title)
    except ValidationError:
        pass
    limit = UrlLink._meta.get_field("title").max_length
    shortened = title.strip()[: limit - 1].rstrip() + "…"
    try:
        title = validate_title(shortened)
    except ValidationError:
        notes.append("The title holds characters that are not text: left out.")
        return ""
    notes.append(f"The title was shortened to {limit} characters.")
    return title


def _fit_tags(tags: list[str], notes: list[str]) -> list[str]:
    """The tags the rules take: any the rules refuse are left out (noted), not the link."""
    try:
        return clean_tags(tags)
    except ValidationError:
        pass
    kept: dict[str, str] = {}
    for tag in tags:
        try:
            clean_tags([tag])
        except ValidationError as error:
            notes.append(f"Tag left out: {' '.join(error.messages)}")
        else:
            kept.setdefault(tag_key(tag), tag)
    names = list(kept.values())
    if len(names) > MAX_TAGS_PER_LINK:
        notes.append(f"Only the first {MAX_TAGS_PER_LINK} of its {len(names)} tags were kept.")
        names = names[:MAX_TAGS_PER_LINK]
    return clean_tags(names)


@dataclass
class _Pending:
    """A row that passed the checks every row gets, waiting for its batch's lookups."""

    source: SourceRow
    long_url: str
    domain_id: int
    domain_name: str | None  # what the create call is given (None: the default domain)
    code_problem: str | None = None  # why the old code cannot be kept
    title: str = ""
    tags: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class _Importer:
    def __init__(
        self,
        *,
        user: AbstractBaseUser,
        parsed: ParsedFile,
        domain: str | None,
        on_taken_code: str,
        dry_run: bool,
        request_host: str | None,
        workspace: Workspace,
    ):
        if on_taken_code not in ON_TAKEN_CODE_CHOICES:
            raise ValueError(f"on_taken_code must be one of {ON_TAKEN_CODE_CHOICES}")
        self.user = user
        self.workspace = workspace
        self.on_taken_code = on_taken_code
        self.dry_run = dry_run
        self.request_host = request_host
        self.url_rules = LongUrlRules(request_host=request_host)
        self.report = ImportReport(format=parsed.format, unit=parsed.unit, dry_run=dry_run)
        self.now = timezone.now()
        # Every row goes to `domain` when it is given (ValidationError now if it is none of
        # ours); otherwise to the domain its old short link was on.
        self.forced_domain = None
        if domain:
            self.forced_domain = self._named(
                domain_for_create(domain, request_host=request_host, workspace_id=workspace.pk),
                domain,
            )
        self.domains: dict[str, tuple[int, str | None] | str] = {}
        # What earlier rows of the file took: (code, domain id) → (row, URL), and
        # (domain id, URL) → row.
        self.codes_seen: dict[tuple[str, int], tuple[int, str]] = {}
        self.urls_seen: dict[tuple[int, str], int] = {}
        self.where = parsed.unit
        self.outcomes: dict[int, ImportEntry] = {}  # the batch's rows' entries, by id(row)

    # --- per row ---------------------------------------------------------------------------

    def skip(self, source: SourceRow, kind: str, reason: str, **extra) -> None:
        self.outcomes[id(source)] = ImportEntry(
            row=source.row,
            outcome=Outcome.SKIPPED,
            long_url=source.long_url,
            old_code=source.code or "",
            reason=reason,
            kind=kind,
            **extra,
        )

    @staticmethod
    def _named(domain_id: int, name: str) -> tuple[int, str | None]:
        """(domain id, its name for the create calls): none for the default domain, whatever
        name reached it (SHORT_URL_BASE's host, the request's), as links on it are reported."""
        return domain_id, None if domain_id == DEFAULT_DOMAIN_ID else name

    def _domain(self, source: SourceRow) -> tuple[int, str | None] | str:
        """(domain id, name for the create call), or why the row's domain is refused."""
        if self.forced_domain is not None:
            return self.forced_domain
        name = source.domain or ""
        if name not in self.domains:
            try:
                domain_id = domain_for_create(name or None, request_host=self.request_host)
            except ValidationError as error:
                self.domains[name] = (
                    f"{' '.join(error.messages)} Staff can add it (the admin's Short domains, "
                    f"or manage.py domains add {name[:100]}); or choose a domain for the whole "
                    "file."
                )
            else:
                self.domains[name] = self._named(domain_id, name)
        return self.domains[name]

    def _prepare(self, source: SourceRow) -> _Pending | None:
        if source.skip_reason:
            self.skip(source, "source", f"Not imported: {source.skip_reason}.")
            return None
        try:
            long_url = self.url_rules.check(source.long_url)
        except ValidationError as error:
            self.skip(source, "refused", _messages(error.message_dict))
            return None
        domain = self._domain(source)
        if isinstance(domain, str):
            self.skip(source, "refused", domain)
            return None
        if source.expires_at is not None and source.expires_at <= self.now:
            self.skip(source, "source", f"Expired in the source on {source.expires_at:%Y-%m-%d}.")
            return None
        pending = _Pending(
            source=source, long_url=long_url, domain_id=domain[0], domain_name=domain[1]
        )
        pending.notes = list(source.notes)
        pending.title = _fit_title(source.title, pending.notes)
        pending.tags = _fit_tags(source.tags, pending.notes)
        if source.code:
            try:
                validate_alias(source.code)
            except ValidationError as error:
                pending.code_problem = " ".join(error.messages)
        return pending

    # --- per batch -------------------------------------------------------------------------

    def run_batch(self, sources: list[SourceRow]) -> None:
        self.outcomes = {}
        self._run_batch(sources)
        # Every row ends in exactly one entry, in the file's order.
        for source in sources:
            self.report.add(self.outcomes.pop(id(source)))

    def _run_batch(self, sources: list[SourceRow]) -> None:
        pending = [p for p in (self._prepare(source) for source in sources) if p is not None]
        if not pending:
            return
        codes = [p.source.code for p in pending if p.source.code and not p.code_problem]
        taken: dict[tuple[str, int], tuple[int, str]] = {}
        if codes:
            rows = UrlLink.objects.filter(code__in=codes).values_list(
                "code", "domain_id", "workspace_id", "long_url"
            )
            taken = {(code, domain_id): (ws, url) for code, domain_id, ws, url in rows}
        owned: dict[tuple[int, str], str] = {}
        hashes = {url_hash(p.long_url) for p in pending}
        rows = (
            UrlLink.objects.active()
            .filter(workspace_id=self.workspace.pk, long_url_hash__in=hashes)
            .order_by("created_at", "id")
            .values_list("domain_id", "long_url", "code")
        )
        for domain_id, url, code in rows:
            owned.setdefault((domain_id, url), code)

        to_create: list[tuple[_Pending, dict, str | None]] = []  # (row, item, new code reason)
        for p in pending:
            decision = self._decide(p, taken, owned)
            if decision is not None:
                to_create.append((p, *decision))
        if not to_create:
            return
        if self.dry_run:
            self._check_only(to_create)
        else:
            self._create(to_create)

    def _decide(self, p: _Pending, taken, owned) -> tuple[dict, str | None] | None:
        """(the create call's item, why its old code is not kept) for a row to create; None
        when the row is reported as skipped."""
        source, code = p.source, p.source.code
        problem = p.code_problem
        if code and not problem:
            key = (code, p.domain_id)
            if key in self.codes_seen:
                row, url = self.codes_seen[key]
                if url == p.long_url:
                    self.skip(source, "duplicate", f"Repeats {self.where} {row} of the file.")
                    return None
                problem = (
                    f"{self.where.capitalize()} {row} of the file has “{code}” for another URL."
                )
            elif key in taken:
                workspace_id, url = taken[key]
                if workspace_id == self.workspace.pk:
                    reason = (
                        "Already exists."
                        if url == p.long_url
                        else (f"“{code}” is already your link to {url[:200]}; not imported again.")
                    )
                    self.skip(source, "exists", reason, code=code, domain=self._host(p.domain_name))
                    return None
                problem = f"“{code}” is already taken on this domain."
        if code and not problem:
            self.codes_seen[(code, p.domain_id)] = (source.row, p.long_url)
            self.urls_seen.setdefault((p.domain_id, p.long_url), source.row)
            return self._item(p, alias=code), None
        if problem and self.on_taken_code == "skip":
            self.skip(source, "code", f"The old code “{code}” cannot be kept: {problem}")
            return None
        url_key = (p.domain_id, p.long_url)
        if url_key in self.urls_seen:
            self.skip(
                source,
                "duplicate",
                f"Same long URL as {self.where} {self.urls_seen[url_key]} of the file.",
            )
            return None
        if url_key in owned:
            self.skip(
                source,
                "exists",
                f"Already exists as {owned[url_key]}"
                + (f" (the old code “{code}” cannot be kept: {problem})" if problem else "")
                + ".",
                code=owned[url_key],
                domain=self._host(p.domain_name),
            )
            return None
        self.urls_seen[url_key] = source.row
        reason = f"The old code “{code}” cannot be kept: {problem}" if problem else None
        return self._item(p, alias=None), reason

    @staticmethod
    def _host(domain_name: str | None) -> str:
        return domain_name or ""

    def _item(self, p: _Pending, *, alias: str | None) -> dict:
        source = p.source
        return {
            "long_url": p.long_url,
            "alias": alias,
            "title": p.title,
            "tags": p.tags,
            "archived": source.archived,
            "expires_at": source.expires_at,
            "pass_query": source.pass_query,
            "max_visits": source.max_visits,
            "domain": p.domain_name,
        }

    def _done(self, p: _Pending, item: dict, new_code_reason: str | None, link=None) -> None:
        notes = " ".join(p.notes)
        if new_code_reason:
            outcome, reason = Outcome.NEW_CODE, " ".join(filter(None, [new_code_reason, notes]))
        else:
            outcome, reason = Outcome.IMPORTED, notes
        self.outcomes[id(p.source)] = ImportEntry(
            row=p.source.row,
            outcome=outcome,
            long_url=p.long_url,
            old_code=p.source.code or "",
            code=link.code if link is not None else (item["alias"] or ""),
            domain=link.domain_host if link is not None else self._host(p.domain_name),
            reason=reason,
        )

    def _check_only(self, to_create: list[tuple[_Pending, dict, str | None]]) -> None:
        """The dry run: the create path's own checks (prepare_link), nothing claimed or saved."""
        for p, item, new_code_reason in to_create:
            try:
                prepare_link(
                    user=self.user,
                    redirect_type=None,
                    request_host=self.request_host,
                    url_rules=self.url_rules,
                    workspace=self.workspace,
                    **item,
                )
            except ValidationError as error:
                self.skip(p.source, "refused", _messages(error.message_dict))
            else:
                self._done(p, item, new_code_reason)

    def _create(self, to_create: list[tuple[_Pending, dict, str | None]]) -> None:
        with transaction.atomic():
            results = link_create_many(
                user=self.user,
                items=[item for _, item, _ in to_create],
                request_host=self.request_host,
                workspace=self.workspace,
            )
            dated = []
            for (p, item, new_code_reason), result in zip(to_create, results, strict=True):
                if result.errors:
                    self.skip(p.source, "refused", _messages(result.errors))
                    continue
                link = result.link
                if not result.created:  # the owner's plain link to the URL, made meanwhile
                    self.skip(
                        p.source,
                        "exists",
                        f"Already exists as {link.code}.",
                        code=link.code,
                        domain=link.domain_host,
                    )
                    continue
                if result.warnings:
                    p.notes.extend(m for messages in result.warnings.values() for m in messages)
                self._done(p, item, new_code_reason, link)
                if p.source.created_at is not None and p.source.created_at < link.created_at:
                    link.created_at = p.source.created_at
                    dated.append(link)
            if dated:
                # The source's creation dates: the list's order and the stats' "all time" start
                # where the link really began.
                UrlLink.objects.bulk_update(dated, ["created_at"], batch_size=BULK_MAX_ITEMS)


def link_import(
    *,
    user: AbstractBaseUser,
    parsed: ParsedFile,
    domain: str | None = None,
    on_taken_code: str = "new",
    dry_run: bool = False,
    request_host: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    workspace: Workspace | str | None = None,
    rows_total: int | None = None,
    report_rows: int | None = None,
) -> ImportReport:
    """Import a parsed file's links into a workspace (`workspace`: a Workspace or slug; default
    `user`'s personal one; `user` must be an owner or editor there); every row ends in the
    report, in file order (see the module's docstring for the rules).

    `parsed.rows` may be read lazily (links.imports.formats.open_file): one batch of them is held
    at a time. `domain`: the short domain (a host) for every row, else each row's own (its old short
    link's host when that is one of ours; the default domain otherwise); ValidationError when it
    is none of this service's. `progress(rows done, rows in all)` is called after each batch
    (`rows_total`: how many there are, when `parsed.rows` cannot say). `report_rows`: how many
    rows of each outcome the report lists (ImportReport.keep; all by default).
    """
    importer = _Importer(
        user=user,
        parsed=parsed,
        domain=domain,
        on_taken_code=on_taken_code,
        dry_run=dry_run,
        request_host=request_host,
        workspace=workspace_for_writing(user=user, workspace=workspace),
    )
    importer.report.keep = report_rows
    if rows_total is None:
        rows_total = len(parsed.rows) if isinstance(parsed.rows, Sized) else 0
    rows = iter(parsed.rows)
    done = 0
    while batch := list(islice(rows, BULK_MAX_ITEMS)):
        importer.run_batch(batch)
        done += len(batch)
        if progress is not None:
            progress(done, max(done, rows_total))
    for row, reason in parsed.problems:  # a dump cut short: after the rows read before it
        importer.report.add(
            ImportEntry(
                row=row, outcome=Outcome.SKIPPED, long_url="", reason=reason, kind="unreadable"
            )
        )
    return importer.report


# --- Uploads run in the background -------------------------------------------------------------

# Sent by name: the task module imports this one (links.tasks.link_import_task).
IMPORT_TASK = "links.tasks.link_import_task"


def link_import_queue(
    *,
    user: AbstractBaseUser,
    file_name: str,
    data: bytes,
    file_format: str = "",
    domain: str = "",
    on_taken_code: str = "new",
    dry_run: bool = False,
    request_host: str = "",
    workspace: Workspace | None = None,
) -> LinkImport:
    """Keep an uploaded file for link_import_run, or ValidationError with every problem the
    upload has at once: too large (SHORTURL_IMPORT_MAX_BYTES), not a file of a known format,
    a domain that is none of ours. The links go to `workspace` (default: the user's personal
    one), where the user must be an owner or editor.

    Only the start of the file is read here (the format told from its header or first item,
    and kept with the job); the rows are counted against SHORTURL_IMPORT_MAX_ROWS by the
    background run.

    Services mode queues the Celery task once the row is committed; the embedded mode's node
    runner picks queued imports up itself (shorturl_project.embedded), as it does the worker's
    other jobs.
    """
    workspace = workspace_for_writing(user=user, workspace=workspace)
    errors: dict[str, list[str]] = {}
    limit = settings.SHORTURL_IMPORT_MAX_BYTES
    if len(data) > limit:
        errors["file"] = [
            f"Files can be at most {filesizeformat(limit)} here; split this one, or ask staff "
            "to run manage.py import_links with it."
        ]
    elif file_format and file_format not in FORMATS:
        errors["file_format"] = [f"Unknown format “{file_format}”."]
    elif not file_format:
        try:
            # Kept with the job: the run reads the file as this format, without telling it again.
            file_format = detect_format(decode(data))
        except ImportFileError as error:
            errors["file"] = [str(error)]
    if on_taken_code not in ON_TAKEN_CODE_CHOICES:
        errors["on_taken_code"] = ["Choose what happens to an old code that cannot be kept."]
    if domain:
        try:
            domain_for_create(domain, request_host=request_host, workspace_id=workspace.pk)
        except ValidationError as error:
            errors.update(error.message_dict)
    if errors:
        raise ValidationError(errors)
    job = LinkImport.objects.create(
        owner=user,
        workspace=workspace,
        file_name=(file_name or "upload")[:255],
        data=data,
        file_format=file_format,
        domain=domain,
        on_taken_code=on_taken_code,
        dry_run=dry_run,
        request_host=request_host,
    )
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        transaction.on_commit(lambda: _send(job.pk))
    return job


def _send(import_id: int) -> None:
    current_app.send_task(IMPORT_TASK, args=[import_id])


_UNFINISHED = (ImportStatus.QUEUED, ImportStatus.RUNNING)

INTERRUPTED = (
    "The import was interrupted (its server process ended). Links of the batches done are in "
    "your links; uploading the file again imports the rest and reports those as already existing."
)
TOO_LONG = (
    "The import took longer than it may (30 minutes) and was stopped. Links of the batches "
    "done are in your links; uploading the file again imports the rest and reports those as "
    "already existing."
)
UNEXPECTED = (
    "The import stopped on an unexpected error (it is in the server's log). Links of the "
    "batches done are in your links; uploading the file again imports the rest and reports "
    "those as already existing."
)


def link_import_fail(*, job: LinkImport | int, reason: str) -> bool:
    """End an import that is waiting or running: failed, with `reason` shown to its owner, its
    file dropped. The one way a job ends other than done: the run's own errors, the sweep of
    interrupted ones, and whoever else must stop a job call it. A run still going in another
    process stops at its next batch (it finds its job no longer running). False when the job
    had already ended (or is gone).

    It must work when the run's database connection failed (the error that ends the job may be
    that one): a connection that cannot be used is dropped and the write tried once more on a
    new one."""
    import_id = job if isinstance(job, int) else job.pk
    values = {
        "status": ImportStatus.FAILED,
        "error": reason,
        "finished_at": timezone.now(),
        "updated_at": timezone.now(),
        "data": b"",
    }
    unfinished = LinkImport.objects.filter(pk=import_id, status__in=_UNFINISHED)
    try:
        ended = unfinished.update(**values)
    except DatabaseError:
        connection = connections[unfinished.db]
        if connection.in_atomic_block:
            raise
        connection.close()
        ended = unfinished.update(**values)
    if ended:
        logger.info("Import %s ended: %s", import_id, reason)
    return bool(ended)


DEPARTED_UPLOADER = (
    "Stopped: its uploader is no longer an owner or editor of the workspace. Links of the "
    "batches done are in the workspace."
)


class _JobEnded(Exception):
    """The job was ended while it ran (link_import_fail from elsewhere): stop importing."""


def _rows_in(data: bytes, file_format: str | None, cap: int) -> tuple[str, int]:
    """(the format, how many rows the file has), reading it once without keeping a row;
    ImportFileError when it cannot be read, has no links, or has more than `cap` of them."""
    parsed = open_file(data, file_format)
    count = 0
    for _ in parsed.rows:
        count += 1
        if count > cap:
            raise ImportFileError(
                f"This file holds more than {cap:,} links, the most one upload may hold here "
                "(nothing was imported). Split it into files of at most "
                f"{cap:,} links, or ask staff to run manage.py import_links with it."
            )
    if not count and not parsed.problems:
        raise no_links_error(parsed)
    return parsed.format, count


def link_import_run(*, import_id: int) -> bool:
    """Run one queued upload: claim it (one runner only, whichever asks first), import it with
    its options, store the report and drop the file. False when it was not waiting (already
    claimed, or gone).

    The job always ends: done with its report, or failed with why (link_import_fail), whatever
    goes wrong, including the report's own save. Only the process dying leaves it running, for
    link_import_sweep to end.

    The file is read twice, each time a row at a time: once to count its rows (a file over
    SHORTURL_IMPORT_MAX_ROWS fails before anything is imported), then to import them a batch
    at a time; the report keeps SHORTURL_IMPORT_REPORT_ROWS rows of each outcome.
    """
    claimed = LinkImport.objects.filter(pk=import_id, status=ImportStatus.QUEUED).update(
        status=ImportStatus.RUNNING, updated_at=timezone.now()
    )
    if not claimed:
        return False
    try:
        _run(import_id)
    except _JobEnded:
        pass  # its row says why already
    except PermissionDenied:  # its uploader is no longer an owner or editor there
        link_import_fail(job=import_id, reason=DEPARTED_UPLOADER)
    except ImportFileError as error:
        link_import_fail(job=import_id, reason=str(error))
    except ValidationError as error:  # its domain was removed since the upload
        link_import_fail(job=import_id, reason=" ".join(error.messages))
    except SoftTimeLimitExceeded:  # the Celery task's time limit (links.tasks)
        link_import_fail(job=import_id, reason=TOO_LONG)
    except Exception:
        logger.exception("Import %s stopped", import_id)
        link_import_fail(job=import_id, reason=UNEXPECTED)
    return True


def _run(import_id: int) -> None:
    job = LinkImport.objects.select_related("owner", "workspace").get(pk=import_id)
    data = bytes(job.data)
    # The format told on upload (link_import_queue); told here for a job queued without one.
    file_format, total = _rows_in(data, job.file_format or None, settings.SHORTURL_IMPORT_MAX_ROWS)
    running = LinkImport.objects.filter(pk=job.pk, status=ImportStatus.RUNNING)
    if not running.update(rows_total=total, updated_at=timezone.now()):
        raise _JobEnded

    def progress(done: int, total: int) -> None:
        if not running.update(rows_done=done, rows_total=total, updated_at=timezone.now()):
            raise _JobEnded

    report = link_import(
        user=job.owner,
        parsed=open_file(data, file_format),
        domain=job.domain or None,
        on_taken_code=job.on_taken_code,
        dry_run=job.dry_run,
        request_host=job.request_host or None,
        progress=progress,
        workspace=job.workspace,
        rows_total=total,
        report_rows=settings.SHORTURL_IMPORT_REPORT_ROWS,
    )
    del data, job
    try:
        running.update(
            status=ImportStatus.DONE,
            report=report.as_dict(),
            finished_at=timezone.now(),
            updated_at=timezone.now(),
            data=b"",
        )
    except DatabaseError:
        logger.exception("The report of import %s could not be saved", import_id)
        link_import_fail(
            job=import_id,
            reason=f"{report.summary()} The report could not be saved (it is in the server's "
            "log); the links are in your links.",
        )


def link_import_sweep() -> int:
    """End the imports whose process died: running, and their row not moved on for
    IMPORT_STALE_AFTER (a run moves it on after every batch). In services mode, also send the
    task again for uploads still waiting after that long (their message may have been lost with
    the broker; a second message for a job is harmless, only one run claims it). Returns how
    many were ended. Run every IMPORT_SWEEP_SECONDS: Celery beat in services mode, the node
    runner in the embedded mode."""
    stale = timezone.now() - IMPORT_STALE_AFTER
    ended = 0
    interrupted = LinkImport.objects.filter(status=ImportStatus.RUNNING, updated_at__lt=stale)
    for import_id in interrupted.values_list("id", flat=True):
        ended += link_import_fail(job=import_id, reason=INTERRUPTED)
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        waiting = LinkImport.objects.filter(status=ImportStatus.QUEUED, updated_at__lt=stale)
        for import_id in waiting.values_list("id", flat=True):
            # Moved on, so that it is sent again once per IMPORT_STALE_AFTER at most.
            if LinkImport.objects.filter(pk=import_id, status=ImportStatus.QUEUED).update(
                updated_at=timezone.now()
            ):
                _send(import_id)
    return ended


def link_imports_stop_for_departed_member(
    *, user: AbstractBaseUser, workspace_id: int | None
) -> int:
    """Fail `user`'s waiting and running imports into a workspace they may no longer write to
    (None: every workspace), with DEPARTED_UPLOADER as the reason. A running one stops before
    its next batch (link_import_fail's promise). Returns how many were stopped."""
    jobs = LinkImport.objects.filter(owner_id=user.pk, status__in=_UNFINISHED)
    if workspace_id is not None:
        jobs = jobs.filter(workspace_id=workspace_id)
    return sum(
        link_import_fail(job=import_id, reason=DEPARTED_UPLOADER)
        for import_id in jobs.values_list("id", flat=True)
    )


def link_import_run_queued() -> int:
    """Run every waiting upload, oldest first (the embedded mode's node runner calls it).
    Returns how many ran."""
    ran = 0
    while True:
        waiting = (
            LinkImport.objects.filter(status=ImportStatus.QUEUED)
            .order_by("id")
            .values_list("id", flat=True)
            .first()
        )
        if waiting is None:
            return ran
        ran += link_import_run(import_id=waiting)
