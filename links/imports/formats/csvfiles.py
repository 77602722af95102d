"""Reading a CSV export: its delimiter (comma, semicolon or tab, as spreadsheets write them), its
header, and each record with the line it starts on. Pure: no I/O."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass

from links.imports.formats.rows import ImportFileError, first_given, header_key


@dataclass
class CsvRecord:
    line: int  # the line the record starts on (a quoted cell may span several)
    cells: dict[str, str]  # header_key(column) → cell text, stripped


def _delimiter(text: str) -> str:
    """The header line's delimiter. Only that is taken from the sniffer: its guesses about
    quoting, from one line, are often wrong (a cell with "" in it would be cut); the rest is
    Excel's CSV, which every exporter writes."""
    first = text.split("\n", 1)[0]
    try:
        return csv.Sniffer().sniff(first, delimiters=",;\t").delimiter
    except csv.Error:
        return ","


def csv_rows(text: str) -> Iterator[tuple[int, list[str]]]:
    """(line, cells) of every non-blank record, the header included."""
    reader = csv.reader(io.StringIO(text, newline=""), csv.excel, delimiter=_delimiter(text))
    line = 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise ImportFileError(
                f"Line {reader.line_num}: this is not valid CSV ({error})."
            ) from None
        start, line = line, reader.line_num + 1
        if any(cell.strip() for cell in cells):
            yield start, [cell.strip() for cell in cells]


def first_record(text: str) -> list[str]:
    """The first non-blank record's cells (the header, if the file has one); [] for none."""
    for _, cells in csv_rows(text):
        return cells
    return []


def read_records(text: str, *, header: list[str] | None = None) -> Iterator[CsvRecord]:
    """The records under the file's header (or under `header` for a file without one), each as
    {header_key(column): cell}. Cells past the header's length are dropped."""
    rows = csv_rows(text)
    if header is None:
        try:
            _, header = next(rows)
        except StopIteration:
            return
    keys = [header_key(name) for name in header]
    for line, cells in rows:
        yield CsvRecord(line=line, cells=dict(zip(keys, cells, strict=False)))


def pick(cells: dict[str, str], *names: str) -> str:
    """The first non-empty cell among these columns (header_key spellings), else ""."""
    return first_given(cells, names) or ""
