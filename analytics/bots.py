"""Which bot sent a User-Agent, if any: its name and its kind (search engine, link preview, …).

The decision comes from two maintained, pinned packages rather than from a hand-kept list:

1. crawler-user-agents (the monperrus crawler list, MIT): ~1,500 patterns, each for a named bot
   and tagged ("search-engine", "social-preview", "ai-crawler", …). A match gives the name and
   the kind.
2. isbot's pattern list (shipped by is-bot, Apache-2.0): generic patterns ("…bot", "crawler",
   "name/1.0" with nothing else, library names) for the long tail of bots that no list names.
   Such a bot is of kind OTHER, named after the token that gave it away.

Before both, two small hand-kept tables: in-app browsers that the sources mistake for their
company's fetchers (people, never bots), and the bots the sources miss (each one tested).

An empty User-Agent is not a bot: it carries nothing to name or classify, and privacy proxies
strip the header from people's requests too, so counting it as a bot would hide real visits.

Cost: neither package can match fast enough as it ships (1,500 patterns overflow `re`'s cache,
and one alternation of them all is scanned branch by branch at every position of the string).
Each pattern is therefore indexed by three characters of the text it cannot match without, and
only the patterns whose text occurs in the User-Agent are searched. The caller caches the result
per distinct User-Agent.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

from django.db import models


class BotKind(models.TextChoices):
    SEARCH = "search", "Search engine"
    SOCIAL = "social", "Social preview"
    MONITORING = "monitoring", "Monitoring"
    AI = "ai", "AI crawler"
    HTTP_LIBRARY = "library", "HTTP library"
    AUTOMATION = "automation", "Automation"
    OTHER = "other", "Other bot"


class Bot(NamedTuple):
    name: str  # short and human: "Googlebot", "Slackbot", "curl"; at most NAME_MAX characters
    kind: str  # a BotKind value


NAME_MAX = 64

# crawler-user-agents tags that give one of our kinds, strongest first: an AI company's search
# bot or link fetcher ("PerplexityBot", "meta-externalagent") counts as AI. Its other tags (seo,
# scanner, advertising, feed-reader, archiver, academic) all mean OTHER here.
KIND_BY_TAG = (
    ("ai-crawler", BotKind.AI),
    ("browser-automation", BotKind.AUTOMATION),
    ("social-preview", BotKind.SOCIAL),
    ("search-engine", BotKind.SEARCH),
    ("monitoring", BotKind.MONITORING),
    ("http-library", BotKind.HTTP_LIBRARY),
)

# crawler-user-agents entries that match people's browsers (seen in Matomo's device fixtures):
# an Android 15 build id, Meta's in-app browser, and the Fluid site-specific browser for macOS.
CRAWLER_LIST_EXCLUDED = frozenset({r"AP3A\.240617\.008", "MetaIAB Facebook", "Fluid"})

# In-app browsers of chat and social apps: a person following a link inside the app. The sources
# list some of these apps because of their link-preview fetchers, which send other User-Agents
# ("Viber" or "ViberUrlDownloader" alone, "facebookexternalhit/1.1"), so these are checked first.
IN_APP_BROWSER = re.compile(
    r"MicroMessenger/"  # WeChat; its X5 engine's "Process/tools" looks like a bot name
    r"|FBAN/|FBAV/|FB_IAB/"  # Facebook and Messenger
    r"|Instagram \d"
    r"|\bLine/\d"
    r"|SogouMobileBrowser/"  # Sogou is also the name of a search engine's spider
    r"|Mozilla/.*\bViber/\d"  # the link fetcher sends no browser UA and no version
)

# What the sources lack, each with a test: (pattern, name, kind). isbot's generic patterns
# already see these as bots, but the crawler list has no entry, so no kind or a good name.
HAND_KEPT: tuple[tuple[str, str, str], ...] = (
    (r"^Java/\d", "Java", BotKind.HTTP_LIBRARY),  # the JDK's HttpURLConnection
    (r"^PostmanRuntime/", "PostmanRuntime", BotKind.HTTP_LIBRARY),
    (r"^(?:node|undici)\b", "Node.js fetch", BotKind.HTTP_LIBRARY),  # Node 18+'s fetch()
    (r"Pinterestbot/", "Pinterestbot", BotKind.SOCIAL),  # the list knows only "Pinterest/0.2"
    (r"Quora Link Preview/", "Quora Link Preview", BotKind.SOCIAL),
)

# isbot's patterns see "bot" in the model name of some Android phones ("M bot 60", "CUBOT"):
# the model between "Android <version>; " and " Build/…" or ")" is masked before they run.
_ANDROID_MODEL = re.compile(
    r"(Android [\d.]+; )(?:[a-z]{2}[-_][a-zA-Z]{2}; )?[^;)]*?(?=(?: Build/[^;)]*)?[;)])"
)
# The characters of a product name: the match of a generic pattern ("bot") is widened to them.
_NAME_CHARS = re.compile(r"[\w.\-]*")
_GRAM = 3


class _Rule(NamedTuple):
    regex: re.Pattern[str]
    name: str  # "" when the name is taken from the matched text
    kind: str


def _skip_bracketed(pattern: str, i: int) -> int:
    """Index just after the group or character class that opens at pattern[i]."""
    depth = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i += 1
            if pattern.startswith("^", i):
                i += 1
            if pattern.startswith("]", i):
                i += 1
            while i < len(pattern) and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
            if depth == 0:
                return i + 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


_QUANTIFIER = re.compile(r"(?:[?*+]|\{\d*,?\d*\})[?+]?")
# Syntax whose text is not what it matches: code escapes (\x41, \101, \N{…}), `regex`'s
# properties and named lists (\p{L}, \L<words>), and verbose mode. Such patterns are searched
# in every User-Agent rather than indexed by a misread text.
_UNREADABLE = re.compile(r"\\[0-9xuUNpPL]|\(\?[a-zA-Z]*x")


def required_text(pattern: str) -> str:
    """The longest run of plain text that every match of `pattern` contains, or "".

    It reads only the top level of the pattern: groups, classes, escapes like \\d, anchors and
    quantified atoms end a run, and a top-level "|" means nothing is required.
    """
    if _UNREADABLE.search(pattern):
        return ""
    best, run, i = "", "", 0
    while i < len(pattern):
        ch = pattern[i]
        literal = ""
        if ch in "|{":  # alternatives, or a brace that is no quantifier (`regex`'s fuzzy {e<=1})
            return ""
        if ch == "\\":
            nxt = pattern[i + 1 : i + 2]
            literal = "" if nxt.isalnum() else nxt
            i += 2
        elif ch in "([":
            i = _skip_bracketed(pattern, i)
        elif ch in ".^$":
            i += 1
        else:
            literal = ch
            i += 1
        quantifier = _QUANTIFIER.match(pattern, i)
        if quantifier:
            i = quantifier.end()
            literal = ""
        if literal:
            run += literal
        else:
            best, run = max(best, run, key=len), ""
    return max(best, run, key=len)


class _Matcher:
    """Rules searched only where the text they require occurs; the leftmost match wins."""

    def __init__(self, rules: Iterable[tuple[str, _Rule]]) -> None:
        texts: list[tuple[str, _Rule]] = [
            (required_text(source).casefold(), rule) for source, rule in rules
        ]
        gram_counts = Counter(
            text[j : j + _GRAM] for text, _ in texts for j in range(len(text) - _GRAM + 1)
        )
        self.rules = [rule for _, rule in texts]
        self.always: list[int] = []
        self.by_gram: dict[str, list[int]] = {}
        for position, (text, _) in enumerate(texts):
            if len(text) < _GRAM:
                self.always.append(position)
                continue
            # the rarest of its grams, so that common ones ("moz", "com") pull in few rules
            grams = (text[j : j + _GRAM] for j in range(len(text) - _GRAM + 1))
            self.by_gram.setdefault(min(grams, key=gram_counts.__getitem__), []).append(position)

    def candidates(self, grams: set[str]) -> list[int]:
        """The rules that may match a text with these grams (see `grams_of`)."""
        found = list(self.always)
        for gram in self.by_gram.keys() & grams:
            found += self.by_gram[gram]
        return found

    def search(self, text: str, grams: set[str]) -> tuple[_Rule, re.Match[str]] | None:
        best: tuple[int, int] | None = None
        hit: tuple[_Rule, re.Match[str]] | None = None
        for position in self.candidates(grams):
            rule = self.rules[position]
            match = rule.regex.search(text)
            if match and (best is None or (match.start(), position) < best):
                best, hit = (match.start(), position), (rule, match)
        return hit


def grams_of(text: str) -> set[str]:
    folded = text.casefold()
    return {folded[j : j + _GRAM] for j in range(len(folded) - _GRAM + 1)}


def _kind_from_tags(tags: Iterable[str]) -> str:
    tags = set(tags)
    return next((kind.value for tag, kind in KIND_BY_TAG if tag in tags), BotKind.OTHER.value)


def crawler_list_entries() -> list[dict]:
    """The pinned crawler-user-agents entries this module uses (the tests read them too)."""
    from crawleruseragents import CRAWLER_USER_AGENTS_DATA

    return [e for e in CRAWLER_USER_AGENTS_DATA if e["pattern"] not in CRAWLER_LIST_EXCLUDED]


def isbot_patterns() -> list[str]:
    from is_bot._patterns import default_patterns  # the data; the package's matcher is not used

    return sorted(default_patterns)


@functools.cache
def _matchers() -> tuple[_Matcher, _Matcher]:
    """Built on first use: compiling ~1,700 patterns takes ~0.1 s, not worth it at import."""
    import regex  # isbot's patterns need variable-width lookbehinds, which `re` lacks

    named = [
        (e["pattern"], _Rule(re.compile(e["pattern"]), "", _kind_from_tags(e.get("tags") or ())))
        for e in crawler_list_entries()
    ]
    # after the list's entries, so that at the same position the list's own entry wins
    named += [
        (pattern, _Rule(re.compile(pattern, re.IGNORECASE), name, BotKind(kind).value))
        for pattern, name, kind in HAND_KEPT
    ]
    generic = [
        (pattern, _Rule(regex.compile(pattern, regex.IGNORECASE), "", BotKind.OTHER.value))
        for pattern in isbot_patterns()
    ]
    return _Matcher(named), _Matcher(generic)


# Words of a browser's or platform's User-Agent, never a bot's name.
_BROWSER_WORDS = (
    "mozilla compatible applewebkit khtml like gecko chrome safari mobile version windows nt "
    "win64 wow64 x64 x86_64 linux x11 u unknown ubuntu macintosh intel mac os x iphone ipad cpu "
    "android build model wv rv en-us firefox edge edg opr msie trident http https www contact "
    "mailto"
)
_NOT_A_NAME = frozenset(_BROWSER_WORDS.split())
_PRODUCT = re.compile(r"(?:^|(?<=[\s;(]))[A-Za-z][\w.\-]*")
_COMMENT = re.compile(r"\s*[/;(,]")  # a version ("/2.1"), a comment ("(…") or the next token
# A web or mail address: matched text in one names the bot's owner, not the bot.
_ADDRESS = re.compile(r"://|@|^\(?\+?www\.|\w\.[A-Za-z]{2,}/")


def _first_product(text: str) -> str:
    for product in _PRODUCT.finditer(text):
        name = product.group().rstrip(".-")
        if name.casefold() not in _NOT_A_NAME:
            return name
    return ""


def _name_at(text: str, start: int, end: int) -> str:
    """A short name for the bot whose User-Agent `text` matched at [start:end].

    The matched text is widened to whole words ("bot" → "Foobot") and cut before a version or a
    comment. When it is part of an address ("+http://yandex.com/bots", "help@moz.com") or a bare
    "Mozilla", the bot's name is elsewhere: the first word that is not a browser's or platform's
    ("YandexBot" in "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)").
    """
    matched = text[start:end]
    core = matched.strip(" /;:,()+-_[]{}\"'")
    if core:
        start += matched.index(core)
        end = start + len(core)
        while start > 0 and _NAME_CHARS.fullmatch(text[start - 1]):
            start -= 1
        end = _NAME_CHARS.match(text, end).end()
    head = _COMMENT.split(text[start:end], maxsplit=1)[0].strip(" .-_")
    chunk = text[text.rfind(" ", 0, start) + 1 :].split(" ", 1)[0]
    if (
        _ADDRESS.search(chunk)
        or head.casefold() == "mozilla"
        or not any(ch.isalnum() for ch in head)
    ):
        head = _COMMENT.split(_first_product(text), maxsplit=1)[0].strip(" .-_") or head
    return (head or matched.strip() or text.strip())[:NAME_MAX]


def detect_bot(user_agent: str) -> Bot | None:
    """The bot that sent `user_agent`, or None for a person (and for an empty User-Agent)."""
    if not user_agent or IN_APP_BROWSER.search(user_agent):
        return None
    named, generic = _matchers()
    grams = grams_of(user_agent)
    hit = named.search(user_agent, grams)
    text = user_agent
    if not hit:
        text = _ANDROID_MODEL.sub(r"\1model", user_agent)
        hit = generic.search(text, grams if text == user_agent else grams_of(text))
    if not hit:
        return None
    rule, match = hit
    return Bot(rule.name or _name_at(text, match.start(), match.end()), rule.kind)


def is_link_preview(user_agent: str) -> bool:
    """A link-preview fetcher (Facebook, X, LinkedIn, Slack, Discord, Telegram, WhatsApp,
    iMessage, …): a bot of kind SOCIAL, as the stats count it ("Social preview"). The one place
    that says so: the redirect answers these with a link's social preview page (serving.gates),
    and their visit is stored as this bot's, never as a click."""
    bot = detect_bot(user_agent)
    return bot is not None and bot.kind == BotKind.SOCIAL
