"""Rows of INSERT statements in a MySQL dump (mysqldump, phpMyAdmin, Adminer), read with a
tokenizer rather than split on commas and quotes: values are MySQL string literals with
backslash escapes (`'it\\'s'`, `'a\\\\b'`, `'say ''hi'''`), a URL may hold `),(` or `;`, and
comments and other tables' statements lie between. Pure: no I/O.

Only INSERT/REPLACE statements into the tables asked for are looked at; every other statement
is skipped up to its `;` (its strings tokenised, so a `;` inside one does not end it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from links.imports.formats.rows import ImportFileError


class DumpSyntaxError(ImportFileError):
    def __init__(self, line: int, message: str):
        super().__init__(f"Line {line}: {message}")
        self.line = line


_TOKEN = re.compile(
    r"""
      (?P<space>\s+)
    | (?P<comment>(?:--(?=\s|$)|\#)[^\n]*|/\*.*?\*/)
    | (?P<string>'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")
    | (?P<ident>`(?:[^`]|``)*`)
    | (?P<number>0[xX][0-9a-fA-F]+|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
    | (?P<word>[A-Za-z_$][\w$]*)
    | (?P<punct>[(),;.=@*])
    | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)

_ESCAPES = {
    "0": "\0",
    "'": "'",
    '"': '"',
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "Z": "\x1a",
    "\\": "\\",
    "%": "\\%",  # MySQL keeps the backslash before % and _ (they matter in LIKE patterns only)
    "_": "\\_",
}
# A backslash escape, or the string's own quote doubled ('' in '…', "" in "…").
_ESCAPE = {quote: re.compile(rf"\\(.)|{quote}{quote}", re.DOTALL) for quote in "'\""}


def _unquote_string(token: str) -> str:
    quote, body = token[0], token[1:-1]

    def replace(match: re.Match) -> str:
        escaped = match.group(1)
        if escaped is None:
            return quote
        return _ESCAPES.get(escaped, escaped)

    return _ESCAPE[quote].sub(replace, body)


@dataclass
class Token:
    kind: str
    text: str
    line: int


def tokens(text: str) -> Iterator[Token]:
    """The dump's tokens with the line each starts on; spaces and comments left out. A string
    or `/* …` comment left open at the end of the file raises DumpSyntaxError."""
    position, line, end = 0, 1, len(text)
    match_at = _TOKEN.match
    while position < end:
        match = match_at(text, position)
        kind = match.lastgroup
        value = match.group(kind)
        if kind == "other" and value in "'\"`":
            raise DumpSyntaxError(line, "the file ends inside a quoted value (a dump cut short?).")
        if kind == "other" and text.startswith("/*", position):
            raise DumpSyntaxError(line, "a /* comment is never closed.")
        if kind not in ("space", "comment"):
            yield Token(kind, value, line)
        line += value.count("\n")
        position = match.end()


def _identifier(token: Token) -> str:
    if token.kind == "ident":
        return token.text[1:-1].replace("``", "`")
    return token.text


@dataclass
class InsertRow:
    line: int  # where the row's "(" is
    table: str
    columns: list[str] | None  # the statement's column list; None when it names none
    values: list  # str, int, float or None, in column order


class _Stream:
    def __init__(self, text: str):
        self._tokens = tokens(text)
        self._next: Token | None = None

    def peek(self) -> Token | None:
        if self._next is None:
            self._next = next(self._tokens, None)
        return self._next

    def take(self) -> Token | None:
        token = self.peek()
        self._next = None
        return token

    def skip_statement(self) -> None:
        while (token := self.take()) is not None and token.text != ";":
            pass


def _value(stream: _Stream) -> str | int | float | None:
    token = stream.take()
    if token is None:
        raise ImportFileError("The dump ends in the middle of a row.")
    following = stream.peek()
    if (
        token.kind == "word"
        and token.text.startswith("_")
        and getattr(following, "kind", "") == "string"
    ):
        token = stream.take()  # a character set introducer: _utf8mb4'…', _binary '…'

    if token.kind == "string":
        return _unquote_string(token.text)
    if token.kind == "number":
        text = token.text
        if text[:2].lower() == "0x":
            # A long one is no value of a link's (and would be too long to write as text).
            return int(text, 16) if len(text) <= 18 else text
        try:
            return int(text)
        except ValueError:
            return float(text)
    if token.kind == "word" and token.text.upper() == "NULL":
        return None
    if token.kind == "word" and token.text.upper() in ("TRUE", "FALSE"):
        return int(token.text.upper() == "TRUE")
    raise DumpSyntaxError(token.line, f"“{token.text[:40]}” is not a value this reader knows.")


def _expect(stream: _Stream, text: str) -> Token:
    token = stream.take()
    if token is None or token.text != text:
        line = token.line if token else 0
        found = f"“{token.text[:40]}”" if token else "the end of the file"
        raise DumpSyntaxError(line, f"expected “{text}”, found {found}.")
    return token


_MODIFIERS = frozenset({"LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY", "IGNORE", "INTO"})


def insert_rows(text: str, *, table_matches: Callable[[str], bool]) -> Iterator[InsertRow]:
    """Every row of every INSERT (or REPLACE) statement into a table `table_matches` accepts,
    in file order."""
    stream = _Stream(text)
    while (token := stream.peek()) is not None:
        if token.kind != "word" or token.text.upper() not in ("INSERT", "REPLACE"):
            stream.skip_statement()
            continue
        stream.take()
        # INSERT [LOW_PRIORITY | DELAYED | HIGH_PRIORITY] [IGNORE] [INTO] tbl
        while (token := stream.peek()) is not None and token.text.upper() in _MODIFIERS:
            stream.take()
        name_token = stream.take()
        if name_token is None:
            return
        table = _identifier(name_token)
        while (token := stream.peek()) is not None and token.text == ".":  # db.tbl
            stream.take()
            table = _identifier(stream.take() or name_token)
        if not table_matches(table):
            stream.skip_statement()
            continue
        columns = None
        if (token := stream.peek()) is not None and token.text == "(":
            stream.take()
            columns = []
            while (token := stream.take()) is not None and token.text != ")":
                if token.text != ",":
                    columns.append(_identifier(token))
        token = stream.take()
        if token is None or token.kind != "word" or token.text.upper() not in ("VALUES", "VALUE"):
            # INSERT … SELECT / SET: no literal rows to read.
            if token is not None and token.text != ";":
                stream.skip_statement()
            continue
        while True:
            opening = _expect(stream, "(")
            values = [_value(stream)]
            while (token := stream.take()) is not None and token.text == ",":
                values.append(_value(stream))
            if token is None or token.text != ")":
                line = token.line if token else opening.line
                raise DumpSyntaxError(line, "a row of values is not closed with “)”.")
            yield InsertRow(line=opening.line, table=table, columns=columns, values=values)
            token = stream.peek()
            if token is not None and token.text == ",":
                stream.take()
                continue
            stream.skip_statement()  # ";", or ON DUPLICATE KEY UPDATE … ;
            break
