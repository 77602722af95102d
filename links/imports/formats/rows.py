"""The one shape every importer gives: a SourceRow per link in the file, and the small readers
of values that the formats share (dates, yes/no, tags, a short link's code). Pure: no I/O."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from core.csv_cells import FORMULA_PREFIXES


class ImportFileError(Exception):
    """The file cannot be read at all (not text, not the format, no links in it): nothing was
    imported. Its message says what to do."""


@dataclass
class SourceRow:
    """One link as the file describes it, before any rule of this service is applied."""

    row: int  # where it is in the file: a line number (CSV, SQL) or an item number (JSON)
    long_url: str
    code: str | None = None  # the old short code (the last path segment of the old short link)
    title: str = ""
    tags: list[str] = field(default_factory=list)
    created_at: dt.datetime | None = None
    archived: bool = False
    domain: str | None = None  # the old short link's host when it may be ours too; None: default
    expires_at: dt.datetime | None = None
    valid_since: dt.datetime | None = None  # its start (Shlink's validSince)
    pass_query: bool | None = None
    max_visits: int | None = None
    # The social preview (this service's own exports carry it; no other shortener has one).
    og_title: str = ""
    og_description: str = ""
    og_image: str = ""
    expired_url: str = ""  # the fallback once stopped (this service's own export)
    # App deep links (this service's own export): where iOS / Android visitors go.
    ios_url: str = ""
    android_url: str = ""
    fallback_url: str = ""  # failover while broken (this service's own export)
    # Conversion tracking (this service's own export, issue #29).
    track_conversions: bool = False
    # Set by the importer when the file itself says the link must not come over (banned,
    # password-protected, revoked in the source): reported as skipped with this reason.
    skip_reason: str | None = None
    notes: list[str] = field(default_factory=list)  # reported beside the row, nothing refused


@dataclass
class ParsedFile:
    """A file's links. From the format parsers, `rows` is read lazily (a generator: the file is
    read as the rows are taken, and `problems` grows as they are met); parse_file gives a list."""

    format: str  # a key of links.imports.formats.FORMATS
    unit: str  # "line" or "item": what SourceRow.row counts
    rows: Iterable[SourceRow]
    # Parts of the file that could not be read (a dump cut short, an item nested too deeply):
    # (row, reason), reported as skipped rows.
    problems: list[tuple[int, str]] = field(default_factory=list)


def header_key(name: str) -> str:
    """A column name as the importers compare them: `Long URL`, `long_url` and `LongUrl` are all
    `longurl`."""
    return re.sub(r"[\s_\-.]+", "", (name or "").strip().lower())


_NAIVE_FORMATS = (
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%d",
    "%m/%d/%Y %H:%M:%S",
    "%m/%d/%Y %H:%M",
    "%m/%d/%Y",
    "%b %d, %Y",
    "%B %d, %Y",
)


def parse_datetime(value) -> dt.datetime | None:
    """An aware datetime from the spellings exports use: ISO 8601 (`2020-01-01T10:00:00+0000`,
    `…Z`, `….000Z`), MySQL's `2020-01-01 10:00:00`, a Unix time, US dates (`01/31/2020`).
    Times without a zone are UTC (YOURLS stores UTC). None when empty or not understood."""
    if value is None or value == "" or not _is_scalar(value):
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return dt.datetime.fromtimestamp(value, tz=dt.UTC)
        except (OverflowError, OSError, ValueError):
            return None
    text = str(value).strip()
    if not text:
        return None
    if text.isdigit() and 9 <= len(text) <= 20:  # a Unix time (more digits: no date)
        return parse_datetime(int(text))
    moment = None
    iso = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    # Python before 3.11 did not take +0000; normalise it to +00:00.
    iso = re.sub(r"([+-]\d{2})(\d{2})$", r"\1:\2", iso)
    try:
        moment = dt.datetime.fromisoformat(iso)
    except ValueError:
        for pattern in _NAIVE_FORMATS:
            try:
                moment = dt.datetime.strptime(text, pattern)  # noqa: DTZ007 - made UTC below
                break
            except ValueError:
                continue
    if moment is None or moment.year < 1971:  # MySQL's zero date, 0000-00-00 00:00:00
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment


_TRUE = {"1", "true", "yes", "y", "on", "t"}
_FALSE = {"0", "false", "no", "n", "off", "f", ""}


def parse_bool(value) -> bool | None:
    """True/False from `true`, `yes`, `1`, a JSON boolean…; None when it says neither."""
    if isinstance(value, bool):
        return value
    if value is None or not _is_scalar(value):
        return None
    if isinstance(value, int | float):
        return bool(value)
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


_TAG_SEPARATORS = re.compile(r"[|;,]")


def split_tags(value) -> list[str]:
    """Tags from a cell or a JSON list. A cell holds them separated by `|`, `;` or `,` (tags
    can contain none of the three: commas are refused by this service, and the other two are
    what spreadsheets and Shlink's export use), so `a|b`, `a; b` and `"a, b"` are all two tags.
    A JSON list is taken as it is (its items are tags, commas and all, for the rules to judge)."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [tag for tag in map(text_of, value) if tag]
    return [tag.strip() for tag in _TAG_SEPARATORS.split(text_of(value)) if tag.strip()]


def split_short_link(value: str) -> tuple[str | None, str | None]:
    """(host, code) of an old short link: `bit.ly/3abcDEF`, `https://go.example.com/spring`
    or a bare `3abcDEF`; the code is the last non-empty path segment. (None, None) when empty."""
    text = (value or "").strip()
    if not text:
        return None, None
    if "://" not in text:
        if "/" not in text:
            return None, text
        text = "//" + text
    try:
        parts = urlsplit(text)
        host = (parts.hostname or "").lower() or None
    except ValueError:
        return None, None
    segments = [segment for segment in parts.path.split("/") if segment]
    return host, (segments[-1] if segments else None)


def without_formula_guard(text: str) -> str:
    """A CSV cell as it was before an export guarded it: `'=SUM(A1)` → `=SUM(A1)`."""
    if text.startswith("'") and text[1:].startswith(FORMULA_PREFIXES):
        return text[1:]
    return text


def first_given(fields: dict, names: tuple[str, ...] | list[str]):
    """The first of these fields (header_key spellings) that holds something: not missing,
    None, "" or an empty list. None when none does."""
    for name in names:
        value = fields.get(name)
        if value not in (None, "", []):
            return value
    return None


def _is_scalar(value) -> bool:
    return isinstance(value, str | int | float)  # bool is an int


def text_of(value) -> str:
    """A cell or JSON value as text: "" for None, and for a list or an object, which no field
    of a link is (and whose text could be nested too deeply to write out)."""
    if value is None or not _is_scalar(value):
        return ""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return ""  # no code or date is this long; str() of one past 4,300 digits raises
    return str(value).strip()
