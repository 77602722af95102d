"""The rows of an import (links.imports.service.link_import hands them over a batch at a time):
every row goes through link_create_many, so URLs, aliases, tags, domains and every other rule are
the ones the form and the API apply; this module only decides, row by row, what to ask of it and
says what became of each row (an entry of links.imports.report).

- An old code is kept (as the link's alias) when it is a valid alias and free on the link's
  domain. One that cannot be kept (taken by someone else, reserved, too short, of the generated
  codes' shape…) gets a new code (`on_taken_code="new"`, the default: the link survives, its
  short URL changes) or its row is skipped (`"skip"`); the report says which and why.
- Nothing is imported twice: a code that is already the owner's link to the same URL on that
  domain is "already exists", and a row that would need a new code is not imported when the
  owner already has an active link to its URL on that domain, or when an earlier row of the file
  had it. A code that is the owner's link to another URL is a taken code like any other: the
  row's link comes with a new code (or is skipped, with `"skip"`).
- Rows go in batches of BULK_MAX_ITEMS, one transaction each: an import stopped half-way keeps
  the batches done, and running it again reports them as already existing.
- A dry run applies the same checks without writing anything (no code is claimed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from links.codes.aliases import validate_alias
from links.imports.formats import ParsedFile, SourceRow
from links.imports.report import ImportEntry, ImportReport, Outcome
from links.models import DEFAULT_DOMAIN_ID, UrlLink
from links.services.bulk import BULK_MAX_ITEMS, link_create_many
from links.services.create import prepare_link
from links.services.domains import domain_for_create
from links.services.policy import LongUrlRules, url_hash, validate_title
from links.services.tags import MAX_TAGS_PER_LINK, clean_tags, tag_key
from workspaces.models import Workspace

ON_TAKEN_CODE_CHOICES = ("new", "skip")


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
                if workspace_id == self.workspace.pk and url == p.long_url:
                    self.skip(
                        source,
                        "exists",
                        "Already exists.",
                        code=code,
                        domain=self._host(p.domain_name),
                    )
                    return None
                # Another link holds the code (ours to another URL, or someone else's): the
                # row's link is not here yet, so it comes with a new code, or is skipped.
                problem = (
                    f"“{code}” is already your link to {url[:200]}."
                    if workspace_id == self.workspace.pk
                    else f"“{code}” is already taken on this domain."
                )
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
            "valid_since": source.valid_since,
            "pass_query": source.pass_query,
            "max_visits": source.max_visits,
            "domain": p.domain_name,
            "og_title": source.og_title,
            "og_description": source.og_description,
            "og_image": source.og_image,
            "expired_url": source.expired_url,
            "ios_url": source.ios_url,
            "android_url": source.android_url,
            "fallback_url": source.fallback_url,
            "track_conversions": source.track_conversions,
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
