"""Reading a JSON export one item at a time, with the standard library's decoder.

`json.loads` of a whole upload builds every object of it at once: a 5 MB `[{},{},…]` is 1.7
million dicts (about 40 times the file in memory) before a single row is looked at. Here the
list of links is found by walking the few keys above it (the formats put it at `data`, `links`,
`shortUrls` or `shortUrls.data`, or make it the whole document), everything else is skipped
without being built, and each item is decoded on its own when the importer asks for it; a caller
that stops early (the row cap) never reads the rest.

An item the decoder cannot build (nested deeper than Python's recursion limit, a number of more
than 4,300 digits) is given as an UnreadableItem, with why, and reading goes on after it; text
that is not JSON at all raises ImportFileError, as a file that cannot be read does. Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from links.imports.formats.rows import ImportFileError, ParsedFile, SourceRow

# Where each format keeps its list of links; () is a document that is the list itself.
Path = tuple[str, ...]

_SPACE = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(r"-?[0-9][0-9.eE+\-]*|true|false|null")
# What matters when skipping a value without building it: strings (which may hold brackets)
# and brackets.
_SKIPPED = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class UnreadableItem:
    reason: str


def _invalid(text: str, position: int, message: str) -> ImportFileError:
    line = text.count("\n", 0, position) + 1
    return ImportFileError(f"Line {line}: this is not valid JSON ({message}).")


def _space(text: str, position: int) -> int:
    return _SPACE.match(text, position).end()


def _skip(text: str, position: int) -> int:
    """The position just past the value that starts at `position`, nothing of it built."""
    if text.startswith(("[", "{"), position):
        depth = 0
        for match in _SKIPPED.finditer(text, position):
            found = match.group()
            if found in "[{":
                depth += 1
            elif found in "]}":
                depth -= 1
                if depth == 0:
                    return match.end()
        raise _invalid(text, len(text), "the file ends inside a list or an object")
    match = _STRING.match(text, position) or _SCALAR.match(text, position)
    if match is None:
        raise _invalid(text, position, "a value was expected")
    return match.end()


def _key(text: str, position: int) -> tuple[str, int]:
    match = _STRING.match(text, position)
    if match is None:
        raise _invalid(text, position, "a quoted key was expected")
    try:
        key = json.loads(match.group())
    except ValueError:
        raise _invalid(text, position, "a key is not a valid string") from None
    position = _space(text, match.end())
    if not text.startswith(":", position):
        raise _invalid(text, position, "“:” was expected after a key")
    return key, _space(text, position + 1)


def _find(text: str, position: int, path: Path, paths: frozenset[Path]) -> tuple[Path, int] | None:
    if text.startswith("[", position):
        return (path, position + 1) if path in paths else None
    if not text.startswith("{", position):
        return None
    prefixes = {candidate[: len(path) + 1] for candidate in paths if len(candidate) > len(path)}
    position = _space(text, position + 1)
    if text.startswith("}", position):
        return None
    while True:
        key, position = _key(text, position)
        inner = (*path, key)
        if inner in prefixes:  # depth is bounded by the longest path (two keys)
            found = _find(text, position, inner, paths)
            if found is not None:
                return found
        position = _space(text, _skip(text, position))
        if text.startswith(",", position):
            position = _space(text, position + 1)
        elif text.startswith("}", position):
            return None
        else:
            raise _invalid(text, position, "“,” or “}” was expected")


def find_list(text: str, paths: frozenset[Path]) -> tuple[Path, int] | None:
    """(path, position just past its “[”) of the first list found at one of `paths`; None when
    there is none. ImportFileError when the text is not JSON."""
    position = _space(text, 0)
    if not text.startswith(("[", "{"), position):
        raise _invalid(text, position, "it starts with neither “[” nor “{”")
    return _find(text, position, (), paths)


def iter_items(text: str, start: int) -> Iterator[object | UnreadableItem]:
    """The items of the list whose “[” ends at `start`, decoded one at a time."""
    position = _space(text, start)
    if text.startswith("]", position):
        return
    while True:
        try:
            item, end = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError as error:
            raise _invalid(text, error.pos, error.msg) from None
        except RecursionError:
            item, end = UnreadableItem("it is nested too deeply to read"), _skip(text, position)
        except ValueError:  # an integer past Python's 4,300-digit limit for reading one
            item = UnreadableItem("it holds a number too long to read")
            end = _skip(text, position)
        yield item
        position = _space(text, end)
        if text.startswith(",", position):
            position = _space(text, position + 1)
        elif text.startswith("]", position):
            return
        else:
            raise _invalid(text, position, "“,” or “]” was expected")


def first_item(text: str, start: int) -> object | UnreadableItem | None:
    """The list's first item (None for an empty list), the rest not read."""
    return next(iter_items(text, start), None)


def skeleton(path: Path, item: object) -> object:
    """The document as the format detectors look at it: the list at `path` holding its first
    item only."""
    value: object = [item]
    for key in reversed(path):
        value = {key: value}
    return value


def item_rows(
    fmt: str, items: Iterable[object], make_row: Callable[[int, dict], SourceRow]
) -> ParsedFile:
    """A JSON format's rows, read lazily: `make_row(number, item)` for each object in the list
    (other values are passed over, as before), an unreadable item kept as a problem."""
    problems: list[tuple[int, str]] = []

    def rows() -> Iterator[SourceRow]:
        for number, item in enumerate(items, start=1):
            if isinstance(item, UnreadableItem):
                problems.append((number, f"Item {number} could not be read: {item.reason}."))
            elif isinstance(item, dict):
                yield make_row(number, item)

    return ParsedFile(format=fmt, unit="item", rows=rows(), problems=problems)
