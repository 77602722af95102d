"""Reading the audit log: one workspace's entries (or several), filtered as the log page and
`GET /api/v1/audit/` filter them, and each entry as both show it."""

from __future__ import annotations

import csv
import datetime as dt
import json
from collections.abc import Iterable, Iterator

from django.db.models import Q
from django.utils import timezone

from audit.models import AuditEntry, AuditEntryQuerySet
from core.csv_cells import LineEcho, spreadsheet_safe

CSV_ROWS_MAX = 100_000  # a download's cap: the newest entries first
CSV_FIELDS = ["at", "action", "channel", "actor", "object_type", "object_id", "object", "changes"]


def _midnight(day: dt.date) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(day, dt.time.min))


def audit_entries(
    *,
    workspace_ids: Iterable[int],
    action: str = "",
    actor: str = "",
    object: str = "",
    since: dt.date | None = None,
    until: dt.date | None = None,
) -> AuditEntryQuerySet:
    """The entries of these workspaces, newest first. `action`: one (`link.update`) or a kind
    (`link`, every link entry); `actor`: a username; `object`: what the entry is about, by its
    name as shown (a link's code, a tag's name) or its id; `since`/`until`: days, both
    included, in the current time zone."""
    entries = AuditEntry.objects.filter(workspace_id__in=list(workspace_ids))
    action = (action or "").strip()
    if action:
        entries = entries.filter(Q(action=action) | Q(object_type=action))
    if actor := (actor or "").strip():
        entries = entries.filter(actor=actor)
    if object := (object or "").strip():
        entries = entries.filter(Q(object_repr=object) | Q(object_id=object))
    # Days as moments (midnight in the current time zone): MySQL's __date needs its time-zone
    # tables, which a server may lack.
    if since is not None:
        entries = entries.filter(at__gte=_midnight(since))
    if until is not None:
        entries = entries.filter(at__lt=_midnight(until + dt.timedelta(days=1)))
    return entries.order_by("-at", "-pk")


def audit_actions(*, workspace_ids: Iterable[int]) -> list[str]:
    """The actions these workspaces' log holds, for the page's filter."""
    rows = AuditEntry.objects.filter(workspace_id__in=list(workspace_ids))
    return list(rows.order_by("action").values_list("action", flat=True).distinct())


def entry_shown(entry: AuditEntry) -> dict:
    """An entry as the API and the CSV show it."""
    return {
        "id": entry.pk,
        "action": entry.action,
        "channel": entry.channel,
        "actor": entry.actor or None,
        "at": entry.at,
        "object": {"type": entry.object_type, "id": entry.object_id, "name": entry.object_repr},
        "changes": entry.changes,
    }


def audit_csv_chunks(entries: AuditEntryQuerySet) -> Iterator[str]:
    """Entries (the first CSV_ROWS_MAX) as CSV lines under a header row; `changes` as JSON
    text ({field: [before, after]}); free text guarded against spreadsheet formulas."""
    writer = csv.writer(LineEcho(), lineterminator="\n")
    yield writer.writerow(CSV_FIELDS)
    for entry in entries[:CSV_ROWS_MAX].iterator():
        yield writer.writerow(
            [
                entry.at.astimezone(dt.UTC).isoformat(),
                entry.action,
                entry.channel,
                spreadsheet_safe(entry.actor),
                entry.object_type,
                entry.object_id,
                spreadsheet_safe(entry.object_repr),
                spreadsheet_safe(json.dumps(entry.changes, ensure_ascii=False)),
            ]
        )
