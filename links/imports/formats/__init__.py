"""Files from other link shorteners, read into one shape (SourceRow) that
links.imports.rows feeds to the ordinary create path. Pure: no database, no settings.

One parser per format, each in its own module; `open_file` decodes the bytes, tells the format
from the content (JSON keys, a CSV header, an INSERT INTO a `…url` table) unless it is given,
and returns a ParsedFile whose rows are read as they are taken (a CSV record, a dump's row or a
JSON item at a time: links.imports.formats.jsonstream), so that a caller holds one batch of rows and
can stop at a cap; `parse_file` reads them all into a list.

| format | what it reads | recognised by |
|---|---|---|
| `bitly` | Bitly's CSV export | a long URL column and `link`/`Bitlink`/`id` |
| `bitly-json` | Bitly's API link objects | items with `long_url` and `link`/`id` |
| `yourls-sql` | a YOURLS SQL dump | an INSERT INTO yourls_url (any table named `…url`) |
| `yourls-csv` | YOURLS's table as CSV | `keyword` and `url`, or no header and 6 such columns |
| `kutt` | Kutt's API link objects | items with `address` and `target` |
| `shlink` | Shlink's API short URL objects | items with `shortCode` and `longUrl` |
| `shlink-csv` | shlink-web-client's CSV export | `shortCode` and `longUrl` columns |
| `plain` | a plain CSV (`long_url, alias, title, tags`); this service's CSV export | `long_url` |
| `shorturl-json` | this service's JSON export | `{"links": [{"code", "long_url", …}]}` |
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from dataclasses import dataclass

from links.imports.formats import bitly, jsonstream, kutt, plain, shlink, yourls
from links.imports.formats.csvfiles import first_record
from links.imports.formats.rows import ImportFileError, ParsedFile, SourceRow, header_key


@dataclass(frozen=True)
class Format:
    label: str
    kind: str  # "csv", "json" or "sql": how the text is read before the parser sees it
    # csv and sql: parse(text); json: parse(the items of the list at one of json_paths).
    parse: Callable[..., ParsedFile]
    json_paths: frozenset[jsonstream.Path] = frozenset()


FORMATS: dict[str, Format] = {
    "bitly": Format("Bitly CSV export", "csv", bitly.parse_bitly_csv),
    "bitly-json": Format("Bitly API JSON", "json", bitly.parse_bitly_json, bitly.JSON_PATHS),
    "yourls-sql": Format("YOURLS SQL dump", "sql", yourls.parse_yourls_sql),
    "yourls-csv": Format("YOURLS CSV", "csv", yourls.parse_yourls_csv),
    "kutt": Format("Kutt API JSON", "json", kutt.parse_kutt, kutt.JSON_PATHS),
    "shlink": Format("Shlink API JSON", "json", shlink.parse_shlink, shlink.JSON_PATHS),
    "shlink-csv": Format("Shlink CSV export", "csv", shlink.parse_shlink_csv),
    "plain": Format("plain CSV", "csv", plain.parse_plain_csv),
    "shorturl-json": Format(
        "shorturl JSON export", "json", plain.parse_shorturl_json, plain.JSON_PATHS
    ),
}
# Every place a JSON format keeps its list of links.
_JSON_PATHS = frozenset().union(*(spec.json_paths for spec in FORMATS.values()))


def decode(data: bytes) -> str:
    """The file's text: UTF-8 (a byte order mark allowed, as Excel writes it) or UTF-16 with its
    byte order mark; ImportFileError otherwise."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass
    else:
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            line = data[: error.start].count(b"\n") + 1
            raise ImportFileError(
                f"Line {line}: this is not UTF-8 text. Save the file as UTF-8 (CSV UTF-8 in "
                "Excel) and try again."
            ) from None
    raise ImportFileError("This file is not text in a known encoding (UTF-8 or UTF-16).")


_JSON_DETECTORS = (
    ("shlink", shlink.looks_like_shlink),
    ("kutt", kutt.looks_like_kutt),
    ("shorturl-json", plain.looks_like_shorturl_json),
    ("bitly-json", bitly.looks_like_bitly_json),
)


def detect_format(text: str) -> str:
    """The format's key, told from the content; ImportFileError when it is none of FORMATS."""
    start = text.lstrip()[:1]
    if start in ("{", "["):
        # Only the first item is read (links.imports.formats.jsonstream), however long the file.
        found = jsonstream.find_list(text, _JSON_PATHS)
        first = jsonstream.first_item(text, found[1]) if found is not None else None
        if isinstance(first, jsonstream.UnreadableItem):
            raise ImportFileError(f"Item 1 could not be read: {first.reason}.")
        if found is not None:
            data = jsonstream.skeleton(found[0], first)
            for name, looks_like in _JSON_DETECTORS:
                if looks_like(data):
                    return name
        raise ImportFileError(
            "This JSON is none of the formats this service reads (Kutt's or Shlink's API "
            "answers, Bitly's links, this service's export); name one with the format option."
        )
    if yourls.looks_like_yourls_dump(text):
        return "yourls-sql"
    header = first_record(text)
    keys = {header_key(name) for name in header}
    if yourls.looks_like_yourls_header(keys):
        return "yourls-csv"
    if shlink.looks_like_shlink_header(keys):
        return "shlink-csv"
    if bitly.looks_like_bitly_header(keys):
        return "bitly"
    if plain.looks_like_plain_header(keys):
        return "plain"
    if yourls.looks_like_bare_yourls_row(header):
        return "yourls-csv"
    if not text.strip():
        raise ImportFileError("The file is empty.")
    raise ImportFileError(
        "The format could not be told from the content: a CSV needs a header naming its columns "
        "(at least long_url), an SQL dump an INSERT INTO `yourls_url`; or name the format."
    )


def open_file(data: bytes, fmt: str | None = None) -> ParsedFile:
    """The file's links as SourceRows read lazily (ParsedFile.rows is a generator: nothing past
    the rows taken is read or held), `fmt` (a FORMATS key) or the detected format;
    ImportFileError when the file cannot be read at all, now or while its rows are taken."""
    text = decode(data)
    if fmt is None or fmt == "auto":
        fmt = detect_format(text)
    if fmt not in FORMATS:
        raise ImportFileError(f"Unknown format “{fmt}”; choose one of {', '.join(FORMATS)}.")
    spec = FORMATS[fmt]
    if spec.kind != "json":
        return spec.parse(text)
    found = jsonstream.find_list(text, spec.json_paths)
    if found is None:
        raise ImportFileError(
            f"This is not {spec.label}: it has no list of links where it keeps one."
        )
    return spec.parse(jsonstream.iter_items(text, found[1]))


def no_links_error(parsed: ParsedFile) -> ImportFileError:
    return ImportFileError(
        f"No links were found in this file (read as {FORMATS[parsed.format].label})."
    )


def parse_file(data: bytes, fmt: str | None = None) -> ParsedFile:
    """open_file's rows read into a list (for a file known to be of reasonable size: the
    import_links command); ImportFileError when the file cannot be read at all."""
    parsed = open_file(data, fmt)
    rows = list(parsed.rows)
    if not rows and not parsed.problems:
        raise no_links_error(parsed)
    return ParsedFile(format=parsed.format, unit=parsed.unit, rows=rows, problems=parsed.problems)


__all__ = [
    "FORMATS",
    "ImportFileError",
    "ParsedFile",
    "SourceRow",
    "detect_format",
    "open_file",
    "parse_file",
]
