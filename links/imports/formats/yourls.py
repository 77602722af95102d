"""YOURLS: the `yourls_url` table in an SQL dump, or the same columns as CSV.

The table is `keyword, url, title, timestamp, ip, clicks` (YOURLS_DB_PREFIX may change
`yourls_`: any table whose name ends in `url` is read). A dump's INSERT may name its columns or,
as mysqldump does, rely on the table's order. The CSV may have that header or none (the export
plugins write the six columns bare). `keyword` is the old code; timestamps are UTC, as YOURLS
stores them; clicks and the creator's IP are not carried over.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from links.imports.formats.csvfiles import first_record, read_records
from links.imports.formats.rows import ParsedFile, SourceRow, header_key, parse_datetime, text_of
from links.imports.formats.sqldump import DumpSyntaxError, insert_rows

COLUMNS = ["keyword", "url", "title", "timestamp", "ip", "clicks"]
_INSERT_INTO_URL_TABLE = re.compile(
    r"\b(?:INSERT|REPLACE)\s+(?:IGNORE\s+)?INTO\s+(?:`?\w+`?\.)?`?\w*url`?[\s(]", re.IGNORECASE
)
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}")


def is_yourls_table(name: str) -> bool:
    return name.lower().endswith("url")


def looks_like_yourls_dump(text: str) -> bool:
    return _INSERT_INTO_URL_TABLE.search(text) is not None


def looks_like_yourls_header(keys: set[str]) -> bool:
    return {"keyword", "url"} <= keys


def looks_like_bare_yourls_row(cells: list[str]) -> bool:
    """The first record of a CSV without a header: keyword, an http(s) URL, a title, a MySQL
    timestamp (and the IP and clicks)."""
    return (
        len(cells) >= 4
        and cells[1].lower().startswith(("http://", "https://"))
        and _TIMESTAMP.match(cells[3]) is not None
    )


def _row(number: int, fields: dict) -> SourceRow:
    return SourceRow(
        row=number,
        long_url=text_of(fields.get("url")),
        code=text_of(fields.get("keyword")) or None,
        title=text_of(fields.get("title")),
        created_at=parse_datetime(fields.get("timestamp")),
    )


def parse_yourls_sql(text: str) -> ParsedFile:
    problems: list[tuple[int, str]] = []

    def rows() -> Iterator[SourceRow]:
        try:
            for insert in insert_rows(text, table_matches=is_yourls_table):
                names = [name.lower() for name in insert.columns or COLUMNS]
                yield _row(insert.line, dict(zip(names, insert.values, strict=False)))
        except DumpSyntaxError as error:
            # A dump cut short, or a statement this reader does not follow: what came before
            # stands.
            problems.append((error.line, f"{error} Rows after it could not be read."))

    return ParsedFile(format="yourls-sql", unit="line", rows=rows(), problems=problems)


def parse_yourls_csv(text: str) -> ParsedFile:
    keys = {header_key(name) for name in first_record(text)}
    header = None if looks_like_yourls_header(keys) else COLUMNS
    rows = (_row(record.line, record.cells) for record in read_records(text, header=header))
    return ParsedFile(format="yourls-csv", unit="line", rows=rows)
