"""An import's report: what became of each row of the file (imported with its old code, with a
new code, or skipped, and why), counted by outcome, with the first rows of each outcome listed
so that a report stays a few megabytes whatever the file holds. Stored with its job
(ImportReport.as_dict / from_dict); its CSV is links.imports.exports's."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from links.services.policy import is_storable_text


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
