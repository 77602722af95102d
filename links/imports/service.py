"""Importing links from another shortener's file (links.imports.formats reads it): link_import
runs a parsed file a batch at a time through the row rules (links.imports.rows, whose docstring
has them) and returns its report (links.imports.report); an upload is a job (LinkImport) that
link_import_queue keeps, link_import_run runs in the background, and link_import_fail or
link_import_sweep end when it cannot finish.

`user` owns the imported links: the seam where a workspace will come in.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sized
from itertools import islice

from celery import current_app
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import DatabaseError, connections, transaction
from django.template.defaultfilters import filesizeformat
from django.utils import timezone

from links.imports.formats import (
    FORMATS,
    ImportFileError,
    ParsedFile,
    decode,
    detect_format,
    no_links_error,
    open_file,
)
from links.imports.report import ImportEntry, ImportReport, Outcome
from links.imports.rows import ON_TAKEN_CODE_CHOICES, _Importer
from links.models import IMPORT_STALE_AFTER, ImportStatus, LinkImport
from links.services.bulk import BULK_MAX_ITEMS
from links.services.domains import domain_for_create
from workspaces.models import Workspace
from workspaces.services import workspace_for_writing

logger = logging.getLogger("shorturl.imports")


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
    report, in file order (the rules: links.imports.rows's docstring).

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
