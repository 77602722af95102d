"""Device type from the device model a User-Agent names, where the User-Agent's words mislead.

Android browsers write "Mobile" into the User-Agent of many tablets (Lenovo Tab, MatePad, Mi
Pad, Galaxy Tab A7 Lite…), so ua-parser calls them phones, and they leave it out on TVs and
laptops, which it calls tablets. What such a User-Agent does say is the model ("SM-T225",
"TB-X606F"), and a list of models knows what each is: Matomo Device Detector's
`regexes/upstream/device/mobiles.yml` (LGPL-3.0), read at run time from the pinned PyPI
package `device_detector`. Only its data is used: the package's parser costs ~11 ms per new
User-Agent (see docs), seconds for a cold worker.

The list is ~2,000 brands in order, each a regex, with the brand's models (regexes too) after
it; a model's type, where it has one, overrides its brand's. Matomo takes the first brand whose
regex matches anywhere in the User-Agent, then that brand's first matching model, and so does
this module, with shortcuts that do not change the answer:

- Each regex is cut into pieces that together match what it matches (`_alternatives`), and
  each piece is indexed by texts one of which it cannot match without. One Aho-Corasick pass
  over the User-Agent names the few pieces worth searching, of ~10,000.
- A piece is compiled when first searched (compiling all of them would take ~5 s), and only the
  models of brands whose models are not all of one kind are looked at.
- What is read from the list is kept in NODE_STATE_DIR (see `open_database`): reading it takes
  ~1 s, loading what was read ~40 ms.

Foldables (Galaxy Z Fold, Pixel Fold…) are phablets in the list, so phones here: they are
phones that unfold, and the User-Agent does not say whether they were unfolded.

analytics.enrich.parse_user_agent asks for Android User-Agents only, and caches the answer per
User-Agent; other systems' User-Agents name the device class themselves (iPhone, iPad, Windows).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import logging
import os
import re
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

if TYPE_CHECKING:
    import regex

logger = logging.getLogger(__name__)

PACKAGE = "device_detector"
DATA_FILE = ("regexes", "upstream", "device", "mobiles.yml")

# Matomo's device types (device_detector.enums.DeviceType) as ours (analytics.models.DeviceType).
# Android feature phones are smartphones to Matomo too; a TV, a car or a watch is "Other".
TYPES = {
    "tablet": "Tablet",
    "smartphone": "Mobile",
    "phablet": "Mobile",
    "feature phone": "Mobile",
    "desktop": "PC",
    "tv": "Other",
    "console": "Other",
    "car browser": "Other",
    "wearable": "Other",
    "peripheral": "Other",
    "smart display": "Other",
    "smart speaker": "Other",
    "camera": "Other",
    "portable media player": "Other",
}

# --- The texts a pattern requires ------------------------------------------------------------

_LEXEME = re.compile(
    r"\\(?:[pPN]\{[^}]*\}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|\d+|.)"  # an escape
    r"|\[\^?\]?(?:\\.|\[:\w+:\]|[^\]\\])*\]"  # a character class
    r"|\(\?\(\w*\)|\(\?<?[=!]"  # a conditional or a lookaround: they require nothing
    r"|\(\?[a-zA-Z-]+\)"  # inline flags
    r"|\((?:\?(?:[:>|]|P?<\w+>|[a-zA-Z-]*:))?"  # a group
    r"|(?:[?*+]|\{\d*(?:,\d*)?\})[?+]?"  # a quantifier
    r"|[^\\\[\](){}|?*+.^$\x00-\x1f\x7f-\U0010ffff]+"  # plain ASCII text
    r"|.",  # ., ^, $, a brace that quantifies nothing, a non-ASCII character
    re.DOTALL,
)
_QUANTIFIER_START = frozenset("?*+{")
_PLAIN = re.compile(r"[^\\\[\](){}|?*+.^$\x00-\x1f\x7f-\U0010ffff]")
_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~ ]")
_NUMBERED_ESCAPES = frozenset("123456789g")
# Groups whose alternatives can be split off (an atomic group's cannot: it tries them in order).
_PLAIN_GROUPS = frozenset({"(", "(?:"})
_DIGITS = frozenset("0123456789")
_LETTER = re.compile("[a-z]")
# A run of text may go on through a character class ("A[68]0": "a60" or "a80") while it stays
# this many texts at most.
_MAX_TEXTS = 32
_TELLING = (True, 3)  # the _score of texts good enough to index by

# Text that nearly every Android User-Agent holds. A pattern may require " build", "android 8"
# or "m" and also something rarer ("raptor"): the rarer text is the one it is indexed by.
_COMMON = "\n".join(
    [
        "mozilla/5.0 (linux; u; en-us; arm_64; wv) applewebkit/537.36 (khtml, like gecko) "
        "version/4.0 chrome/120.0.6099.144 mobile safari/537.36 build/",
        *(f"; android {version}.0.0;" for version in range(1, 20)),
    ]
)


def _score(texts: set[str]) -> tuple[bool, int]:
    """How few User-Agents hold one of `texts`, roughly: higher is fewer. Numbers are common
    (versions, builds, screen sizes)."""
    rare = not any(text in _COMMON or not _LETTER.search(text) for text in texts)
    return rare, min(map(len, texts))


def _better(one: set[str] | None, other: set[str] | None) -> set[str] | None:
    if one is None or (other is not None and _score(other) > _score(one)):
        return other
    return one


def _optional(quantifier: str) -> bool:
    return quantifier[0] in "?*" or quantifier.startswith(("{0", "{,"))


@functools.cache
def _class_characters(lexeme: str) -> frozenset[str]:
    """The lower-case characters a class lexeme ("[68]", "[_ ]", "\\d") matches; empty when they
    are many, negated or not all ASCII."""
    if lexeme == "\\d":
        return _DIGITS
    if not lexeme.startswith("[") or lexeme.startswith("[^") or "[:" in lexeme:
        return frozenset()  # negated, or a POSIX class ("[[:alpha:]]") inside
    body, found, i = lexeme[1:-1], set(), 0
    while i < len(body):
        char = body[i]
        if char == "\\":
            escaped = body[i + 1 : i + 2]
            if escaped == "d":
                found |= _DIGITS
            elif _PUNCTUATION.match(escaped):
                found.add(escaped)
            else:
                return frozenset()
            i += 2
        elif body[i + 1 : i + 2] == "-" and i + 2 < len(body):
            low, high = char, body[i + 2]
            if high == "\\" or ord(high) - ord(low) > _MAX_TEXTS:
                return frozenset()
            found.update(map(chr, range(ord(low), ord(high) + 1)))
            i += 3
        else:
            found.add(char)
            i += 1
    lowered = frozenset(char.lower() for char in found)
    if len(lowered) > _MAX_TEXTS or not all(" " <= char <= "~" for char in lowered):
        return frozenset()
    return lowered


class _Sequence:
    """The alternatives of a group, or of the whole pattern, as its lexemes are read."""

    __slots__ = (
        "alternatives", "best", "counts", "ends", "lead", "leads", "opened", "other", "run",
        "starts",
    )  # fmt: skip

    def __init__(self, counts: bool, opened: int) -> None:
        self.counts = counts  # False for lookarounds and conditionals: they require no text
        self.opened = opened  # the index of the lexeme that opens it
        self.starts = [opened + 1]  # lexeme ranges [start, end) of its alternatives
        self.ends: list[int] = []
        self.alternatives: list[set[str] | None] = []  # the texts each requires (None: none)
        # per alternative: its first group of alternatives, where that ends, and the texts the
        # rest of the alternative requires
        self.leads: list[tuple[_Sequence, int, set[str] | None] | None] = []
        self.best: set[str] | None = None  # of the alternative being read
        self.other: set[str] | None = None  # the same, without its lead group
        self.lead: tuple[_Sequence, int] | None = None
        self.run: set[str] = set()  # the texts of the plain run being read

    def offer(self, texts: set[str], lead: bool = False) -> None:
        """One of `texts` occurs in every match of the alternative being read."""
        self.best = _better(self.best, texts)
        if not lead:
            self.other = _better(self.other, texts)

    def extend_run(self, characters: Iterable[str]) -> None:
        """The run goes on with one of `characters` (or texts)."""
        count = len(characters)  # type: ignore[arg-type]
        if not self.run:
            self.run = set(characters)
        elif count == 1 or (
            # through a class only while the run tells little: each way through it is a text
            len(self.run) * count <= _MAX_TEXTS and _score(self.run) < _TELLING
        ):
            self.run = {text + char for text in self.run for char in characters}
        else:
            self.end_run()
            self.run = set(characters)

    def end_run(self) -> None:
        if self.run:
            self.offer(self.run)
            self.run = set()

    def end_alternative(self, end: int) -> None:
        self.end_run()
        self.alternatives.append(self.best)
        self.ends.append(end)
        self.leads.append(None if self.lead is None else (*self.lead, self.other))
        self.best = self.other = self.lead = None

    def required(self) -> set[str] | None:
        """What every match of the whole requires: a text of each alternative."""
        if None in self.alternatives:
            return None
        return set().union(*self.alternatives)  # type: ignore[arg-type]


def _alternatives(pattern: str) -> list[tuple[str, set[str] | None]]:
    """`pattern` as alternatives that together match what it matches, each with lower-case
    texts one of which occurs in every text it matches case-insensitively (None: no such texts
    could be read from it).

    The alternatives are the top-level ones, and one that holds a group of alternatives (as
    most of the list's patterns do: "(?:SM-T2[0-9]+|GT-P[0-9]+)(?:[);/ ]|$)") becomes one
    alternative per alternative of its first such group: each is cheaper to search, and their
    texts are more telling than the group's together.

    The texts only decide which patterns are searched, so a superset is always safe: a run of
    text ends at anything it cannot go on through (a large class, \\w, a group, a quantified
    character), an optional group adds nothing, and a group that must match adds the texts of
    its alternatives when each has some.
    """
    lexemes = _LEXEME.findall(pattern)
    root = _Sequence(counts=True, opened=-1)
    stack = [root]
    whole = False  # a back-reference, a conditional or inline flags: alternatives not split
    index, count = 0, len(lexemes)
    while index < count:
        lexeme, at = lexemes[index], index
        index += 1
        quantifier = ""
        if index < count and lexemes[index][0] in _QUANTIFIER_START and lexeme[0] not in "(|":
            quantifier, index = lexemes[index], index + 1
        top = stack[-1]
        characters: Iterable[str] = ()
        if lexeme[0] == "\\":
            whole = whole or lexeme[1:2] in _NUMBERED_ESCAPES
            # an escaped punctuation character stands for itself
            if len(lexeme) == 2 and _PUNCTUATION.match(lexeme[1]):
                characters = (lexeme[1],)
            else:
                characters = _class_characters(lexeme)
        elif lexeme[0] == "[":
            characters = _class_characters(lexeme)
        elif _PLAIN.match(lexeme):
            characters = (lexeme.lower(),)
            if quantifier:  # it quantifies the last character alone
                if len(lexeme) > 1:
                    top.extend_run((lexeme[:-1].lower(),))
                characters = (lexeme[-1].lower(),)
        if characters:
            if quantifier and _optional(quantifier):
                top.end_run()
            else:
                top.extend_run(characters)
                if quantifier:  # it repeats: what follows is not next to it
                    top.end_run()
        elif lexeme == "|":
            top.end_alternative(at)
            top.starts.append(at + 1)
        elif lexeme == ")":
            if len(stack) == 1:
                return [(pattern, None)]  # unbalanced: not read
            group = stack.pop()
            group.end_alternative(at)
            top = stack[-1]
            texts = group.required()
            required = group.counts and not (quantifier and _optional(quantifier))
            lead = (
                top is root
                and root.lead is None
                and required
                and not quantifier
                and lexemes[group.opened] in _PLAIN_GROUPS
                and len(group.alternatives) > 1
                # not a mere end of word, "(?:[);/ ]|$)"
                and any(texts and min(map(len, texts)) > 1 for texts in group.alternatives)
            )
            if lead:
                root.lead = (group, at)
            if required and texts:
                top.offer(texts, lead=lead)
        elif lexeme.startswith("(?(") or (lexeme[0] == "(" and not lexeme.endswith(")")):
            whole = whole or lexeme.startswith("(?(")
            top.end_run()
            counts = not lexeme.startswith(("(?=", "(?!", "(?<=", "(?<!", "(?("))
            stack.append(_Sequence(counts=counts, opened=at))
        else:  # a large class, ., ^, $, inline flags, a quantifier of nothing
            whole = whole or lexeme.startswith("(?")
            top.end_run()
    if len(stack) != 1:
        return [(pattern, None)]
    root.end_alternative(count)
    if whole:
        return [(pattern, root.required())]
    found = []
    for start, end, texts, lead in zip(
        root.starts, root.ends, root.alternatives, root.leads, strict=True
    ):
        if lead is None:
            found.append(("".join(lexemes[start:end]), texts))
            continue
        group, closed, _ = lead
        head = "".join(lexemes[start : group.opened])
        tail = "".join(lexemes[closed + 1 : end])
        for first, last in zip(group.starts, group.ends, strict=True):
            # Read again as a whole: its text may run across the group's bounds ("RM-(?:107|
            # 109)": "rm-107", not "107"), and it may hold another group to split.
            found += _alternatives(head + "".join(lexemes[first:last]) + tail)
    return found


# --- Matching --------------------------------------------------------------------------------


def _starts_word(text: str, at: int) -> bool:
    """Whether a match may start at text[at]: what device_detector's BOUNDED_REGEX puts before
    every pattern, "(?:^|[^A-Z0-9_-]|[^A-Z0-9-]_|sprd-|MZ-)", case-insensitively. Checked here
    rather than compiled into every pattern: with it, compiling one costs ~3 times as much."""
    if at == 0:
        return True
    before = text[at - 1]
    if not (before.isascii() and (before.isalnum() or before in "_-")):
        return True
    if before == "_" and at >= 2:
        second = text[at - 2]
        if not (second.isascii() and (second.isalnum() or second == "-")):
            return True
    return text[max(0, at - 5) : at].lower().endswith(("sprd-", "mz-"))


# The index keeps a list of patterns as a few long strings (see `_pack`): loading ~25,000 small
# lists and strings from JSON took ~0.1 s in a new process, a few long strings take ~5 ms.
_SEPARATOR = "\n"


def _pack(patterns: Iterable[str]) -> dict[str, str]:
    """The searchable pieces of `patterns` (see `_alternatives`) and the texts they require."""
    owners, sources, always = [], [], []
    holders: dict[str, list[int]] = {}
    for position, pattern in enumerate(patterns):
        for source, texts in _alternatives(pattern):
            if _SEPARATOR in source:
                raise ValueError(f"a pattern holds a line break: {source!r}")
            piece = len(sources)
            owners.append(position)
            sources.append(source)
            if texts is None:
                always.append(piece)
            for text in sorted(texts or ()):
                holders.setdefault(text, []).append(piece)
    return {
        "owners": " ".join(map(str, owners)),
        "sources": _SEPARATOR.join(sources),
        "always": " ".join(map(str, always)),
        "texts": _SEPARATOR.join(holders),
        "holders": _SEPARATOR.join(" ".join(map(str, pieces)) for pieces in holders.values()),
    }


class _Rules:
    """Patterns tried in list order, each only on User-Agents holding a text it requires."""

    def __init__(self, packed: dict[str, str]) -> None:
        import ahocorasick_rs

        self.owners = [int(owner) for owner in packed["owners"].split()]
        self.sources = packed["sources"].split(_SEPARATOR)
        self.compiled: list[re.Pattern[str] | regex.Pattern[str] | None] = [None] * len(
            self.sources
        )
        self.always = [int(piece) for piece in packed["always"].split()]
        texts = packed["texts"].split(_SEPARATOR) if packed["texts"] else []
        self.holders = packed["holders"].split(_SEPARATOR)  # read when their text occurs
        self.automaton = ahocorasick_rs.AhoCorasick(texts) if texts else None

    def first_match(self, user_agent: str, folded: str) -> int | None:
        """The position of the first pattern that matches `user_agent` (`folded` is its
        casefold()), or None."""
        found = set(self.always)
        if self.automaton is not None:
            hits = {m[0] for m in self.automaton.find_matches_as_indexes(folded, overlapping=True)}
            for text in hits:
                found.update(map(int, self.holders[text].split()))
        for piece in sorted(found):
            compiled = self.compiled[piece] or self._compile(piece)
            at = 0
            while (match := compiled.search(user_agent, at)) is not None:
                if _starts_word(user_agent, match.start()):
                    return self.owners[piece]
                at = match.start() + 1
        return None

    def _compile(self, piece: int) -> re.Pattern[str] | regex.Pattern[str]:
        source = self.sources[piece]
        try:
            compiled = re.compile(source, re.IGNORECASE)
        except re.error:  # variable-width lookbehinds: device_detector's engine has them
            import regex

            compiled = regex.compile(source, regex.IGNORECASE)
        self.compiled[piece] = compiled
        return compiled


class _Database:
    def __init__(self, index: dict) -> None:
        self.devices = index["devices"].split(_SEPARATOR)
        self.brands = _Rules(index["brands"])
        # brand -> its models' devices and patterns, for brands whose models differ in kind
        self.packed_models: dict[str, dict] = index["models"]
        self.models: dict[int, tuple[list[str], _Rules]] = {}

    def device(self, user_agent: str) -> str:
        folded = user_agent.casefold()
        brand = self.brands.first_match(user_agent, folded)
        if brand is None:
            return ""
        packed = self.packed_models.get(str(brand))
        if packed is None:
            return self.devices[brand]
        if brand not in self.models:
            self.models[brand] = (packed["devices"].split(_SEPARATOR), _Rules(packed["rules"]))
        devices, models = self.models[brand]
        model = models.first_match(user_agent, folded)
        return self.devices[brand] if model is None else devices[model]


# --- The index, built once per version of the data and of this module --------------------------
# Reading the list's ~17,000 patterns takes ~1 s, so what is read from them is kept as JSON in
# NODE_STATE_DIR (node-local and writable by every process of the node), named after the data
# and this module's code: a new worker then loads it in ~40 ms.


def build_index(data: dict) -> dict:
    """What matching needs from the list (mobiles.yml as parsed): each brand's device type and
    searchable pieces, and the models of the brands whose models are not all of one kind."""
    devices, patterns, models = [], [], {}
    for brand, entry in enumerate(data.values()):
        device = str(entry.get("device") or "")
        devices.append(device)
        # device_detector URL-decodes every pattern (a few models spell "," as "%2C").
        patterns.append(unquote(str(entry["regex"])))
        entries = entry.get("models") or []
        model_devices = [str(model.get("device") or device) for model in entries]
        if {TYPES.get(kind) for kind in model_devices} - {TYPES.get(device)}:
            models[str(brand)] = {
                "devices": _SEPARATOR.join(model_devices),
                "rules": _pack(unquote(str(model["regex"])) for model in entries),
            }
    return {"devices": _SEPARATOR.join(devices), "brands": _pack(patterns), "models": models}


def data_path() -> Path | None:
    """mobiles.yml of the installed device_detector package, found without importing it (its
    import loads its whole parser, ~0.1 s)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)), *DATA_FILE)


_INDEX_PREFIX = "device-models-"


def _index_file(data: bytes) -> Path | None:
    from django.conf import settings

    directory = getattr(settings, "NODE_STATE_DIR", "")
    if not directory:
        return None
    digest = hashlib.sha1(data, usedforsecurity=False)
    digest.update(Path(__file__).read_bytes())  # a changed reader makes a new index
    return Path(directory) / f"{_INDEX_PREFIX}{digest.hexdigest()[:16]}.json"


def _save(saved: Path, index: dict) -> None:
    try:
        saved.parent.mkdir(parents=True, exist_ok=True)
        partial = saved.with_name(f"{saved.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(index), encoding="utf-8")
        partial.replace(saved)  # whole or not at all, for the other workers
        for old in saved.parent.glob(f"{_INDEX_PREFIX}*.json"):
            if old != saved:
                old.unlink(missing_ok=True)  # of an earlier version of the data or code
    except OSError as exc:
        logger.info("Device model index not saved (%s): each worker reads the list", exc)


_UNREADABLE = (OSError, ValueError, KeyError, TypeError, AttributeError)


_opened: list[_Database | None] = []
_opening = threading.Lock()


def _database() -> _Database | None:
    """The process's list, opened on first use (see `open_database`): once, though flush lanes
    are threads that may ask at the same time."""
    if not _opened:
        with _opening:
            if not _opened:
                _opened.append(open_database())
    return _opened[0]


def open_database() -> _Database | None:
    """The list, from the index in NODE_STATE_DIR when one was saved for this data and code
    (else read, and the index saved); None, logged, when the list cannot be read."""
    path = data_path()
    try:
        if path is None:
            raise FileNotFoundError(f"package {PACKAGE} is not installed")
        data = path.read_bytes()
        saved = _index_file(data)
        if saved is not None:
            try:
                return _Database(json.loads(saved.read_bytes()))
            except _UNREADABLE:
                pass  # not saved yet, or damaged: read the list again
        import yaml_rs  # device_detector's own YAML reader: ~20 times faster than PyYAML here

        index = build_index(yaml_rs.loads(data.decode("utf-8")))
        database = _Database(index)
    except _UNREADABLE as exc:
        logger.warning("Device model list unreadable (%s): device types from User-Agents", exc)
        return None
    if saved is not None:
        _save(saved, index)
    return database


def matomo_device(user_agent: str) -> str:
    """The list's device type ("tablet", "smartphone", "phablet", "tv", …) of the model that
    `user_agent` names, or "" when it knows no model in it. (For a brand whose models are all
    of one of our types, the brand's own type stands for theirs.)"""
    database = _database()
    return database.device(user_agent) if database is not None and user_agent else ""


def device_type_from_model(user_agent: str) -> str | None:
    """Our device type ("Tablet", "Mobile", "PC" or "Other") of the device model that
    `user_agent` names; None when the list knows no model in it."""
    return TYPES.get(matomo_device(user_agent))
