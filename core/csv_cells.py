"""CSV that opens safely in a spreadsheet, streamed line by line: for every app's CSV download
(the links export, visits, the audit log)."""

from __future__ import annotations

from collections.abc import Iterable

from django.http import StreamingHttpResponse

# What a spreadsheet runs as a formula when a cell starts with it; CSV exports put an apostrophe
# in front of such text (spreadsheet_safe), and the plain CSV importer takes it off again.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


class LineEcho:
    """A file-like object whose write() returns the line, so csv.writer can feed a stream."""

    def write(self, value: str) -> str:
        return value


def spreadsheet_safe(value: object) -> str:
    """A CSV cell a spreadsheet shows as text ("" for None): one starting like a formula (`=`,
    `+`, `-`, `@`…) gets an apostrophe in front."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def csv_download(chunks: Iterable[str], filename: str) -> StreamingHttpResponse:
    """CSV lines streamed as a download named `filename`."""
    response = StreamingHttpResponse(chunks, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
