"""What the link cache keeps about a link (LinkEntry) and its text form in Redis, and the ASCII
form of a long URL that the redirect sends as its Location.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import idna
from django.utils.encoding import iri_to_uri

from links.cache.keys import code_of_key, domain_of_key, link_key
from links.models import DEFAULT_DOMAIN_ID, HealthStatus, UrlLink

# The value cached for a key no link has.
_MISSING = "-"

# The entry's flags field, present only when a link differs from the default: "noquery" for a
# link that keeps visitors' query strings to itself, or a JSON object (LinkEntry._gates) for a
# gated link or one whose start is still to come ("since"), or one with a fallback ("fb": a
# plain one's revoked field stays "0", so the fused read counts it as before). Entries of
# default links keep the five-field form older code reads (a rolling upgrade, and entries
# cached before it, stay valid). JSON escapes tabs, so a field never holds one.
_NO_QUERY_FLAG = "noquery"
# The revoked field of an active link whose clicks the fused read must not count: a gated one
# (decided, and counted or not, in serving/gates.py) or one with a start still to come (not
# counted before it, recorded by serving/redirect.py after it). serving.fused_read's Lua
# script pushes a visit only for "0".
_GATED = "2"


@dataclass(frozen=True, slots=True)
class LinkEntry:
    code: str
    link_id: int
    location: str  # the long URL as it goes into the Location header (ASCII)
    redirect_type: int
    expires_at: float | None  # epoch seconds
    revoked: bool
    pass_query: bool = True  # a visitor's query string goes on to the location
    # The gates (serving/gates.py): a link with any of them is not counted by the fused push.
    password_hash: str = ""  # Django's hash; the password itself is never cached
    max_visits: int | None = None
    # ({"device"?, "os"?, "country"?, "city"?, "language"?, "query"?, "ip"?, "after"?,
    # "before"?, "location"}, …): the stored conditions (links.services.targeting), and
    # "location", the rule's url as it goes into the Location header.
    rules: tuple[dict, ...] = ()
    variants: tuple[tuple[str, int], ...] = ()  # (location, weight)
    # Set by links/gates.destination on the entry a visitor is sent on with, when a rule or a
    # variant chose its location: the visit records it ("" is the long URL). Never cached.
    destination: str = ""
    domain_id: int = DEFAULT_DOMAIN_ID  # part of the key, never of the cached value
    # Its start (epoch seconds), compared with the time of each request as expires_at is, so a
    # cached entry goes live by itself; None once past when cached (it can matter no more).
    valid_since: float | None = None
    # The social preview (links/services/previews.py): a link with any of these set answers a
    # link-preview fetcher with its preview page (serving/gates.py), so it is decided there as
    # a gated link is; og_image as stored (an https URL the long-URL policy passed).
    og_title: str = ""
    og_description: str = ""
    og_image: str = ""
    # The fallback (UrlLink.expired_url) as it goes into the Location header: where a visitor is
    # sent once the link is expired, revoked or at its limit (serving/fallback.py); "" none.
    fallback: str = ""
    # The app deep links (UrlLink.ios_url / android_url) as they go into the Location header:
    # where a visitor on that OS goes when no rule took them (serving/gates.py); "" none.
    ios_location: str = ""
    android_location: str = ""
    # Set on the entry a visitor of a stopped link is sent to its fallback with (the state, a
    # LinkStatus value): the visit notes it. Never cached, as `destination`.
    link_state: str = ""
    # The failover (UrlLink.fallback_url) as it goes into the Location header, set only while
    # the link's destination is broken (links.services.health): every visitor goes there
    # (serving/gates.py). "" otherwise, so a healthy link's entry is as it always was.
    failover: str = ""
    # UrlLink.track_conversions: the redirect appends the click id (CLICK_ID_PARAM, the visit's
    # event_id) to a web destination (serving/gates.py), so the link is gated; plain links
    # never pay for it.
    track_conversions: bool = False

    @classmethod
    def from_link(cls, link: UrlLink) -> LinkEntry:
        since = link.valid_since.timestamp() if link.valid_since else None
        return cls(
            valid_since=since if since is not None and since > time.time() else None,
            code=link.code,
            domain_id=link.domain_id,
            link_id=link.pk,
            location=redirect_location(link.long_url),
            redirect_type=link.redirect_type,
            expires_at=link.expires_at.timestamp() if link.expires_at else None,
            revoked=link.revoked_at is not None,
            pass_query=link.pass_query,
            password_hash=link.password_hash,
            max_visits=link.max_visits,
            rules=tuple(
                {
                    **{key: value for key, value in rule.items() if key != "url"},
                    "location": redirect_location(rule["url"]),
                }
                for rule in link.rules or ()
            ),
            variants=tuple(
                (redirect_location(variant["url"]), int(variant["weight"]))
                for variant in link.variants or ()
            ),
            og_title=link.og_title,
            og_description=link.og_description,
            og_image=link.og_image,
            fallback=redirect_location(link.expired_url) if link.expired_url else "",
            ios_location=app_location(link.ios_url),
            android_location=app_location(link.android_url),
            failover=(
                redirect_location(link.fallback_url)
                if link.fallback_url and link.health_status == HealthStatus.BROKEN
                else ""
            ),
            track_conversions=link.track_conversions,
        )

    # A password, a visit cap, rules, variants, a preview, an app link, conversion tracking or a
    # failover under way: the click is decided in serving/gates.py. Worked out once per entry,
    # not on each redirect that asks (every redirect does).
    gated: bool = field(init=False, repr=False, compare=False)
    # Whether the fused read counts this link's clicks (serving.fused_read): a plain link, not
    # gated and with no start to wait for.
    counted_by_read: bool = field(init=False, repr=False, compare=False)

    # A social preview is set: preview fetchers get its page (serving/gates.py).
    preview: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        preview = bool(self.og_title or self.og_description or self.og_image)
        object.__setattr__(self, "preview", preview)
        gated = bool(
            self.password_hash
            or self.max_visits
            or self.rules
            or self.variants
            or preview
            or self.ios_location
            or self.android_location
            or self.failover
            or self.track_conversions
        )
        object.__setattr__(self, "gated", gated)
        object.__setattr__(self, "counted_by_read", not gated and self.valid_since is None)

    @property
    def key(self) -> str:
        return link_key(self.code, self.domain_id)

    def is_gone(self, now: float | None = None) -> bool:
        """Revoked or past its expiry: the redirect answers 410."""
        if self.revoked:
            return True
        return self.expires_at is not None and self.expires_at <= (now or time.time())

    def starts_later(self, now: float | None = None) -> bool:
        """Before its start (LinkStatus.SCHEDULED): the redirect answers "not live yet"."""
        return self.valid_since is not None and self.valid_since > (now or time.time())

    def _gates(self) -> dict:
        gates: dict = {"q": int(self.pass_query)}
        if self.valid_since is not None:
            gates["since"] = self.valid_since
        if self.password_hash:
            gates["pw"] = self.password_hash
        if self.max_visits:
            gates["max"] = self.max_visits
        if self.rules:
            gates["rules"] = list(self.rules)
        if self.variants:
            gates["variants"] = [list(variant) for variant in self.variants]
        if self.preview:
            gates["og"] = [self.og_title, self.og_description, self.og_image]
        if self.fallback:
            gates["fb"] = self.fallback
        if self.ios_location or self.android_location:
            gates["app"] = [self.ios_location, self.android_location]
        if self.failover:
            gates["fo"] = self.failover
        if self.track_conversions:
            gates["cv"] = 1
        return gates

    # "id<TAB>redirect type<TAB>expiry or empty<TAB>revoked 0/1/2<TAB>[flags<TAB>]location": the
    # Lua script in serving.fused_read reads the first four fields, so keep the two in step. A
    # location never holds a tab (it is percent-encoded), so the field count tells the forms
    # apart.
    def serialize(self) -> str:
        expires = "" if self.expires_at is None else repr(self.expires_at)
        revoked = "1" if self.revoked else "0"
        if not self.counted_by_read:
            flags = json.dumps(self._gates(), separators=(",", ":")) + "\t"
            revoked = "1" if self.revoked else _GATED
        elif self.fallback:
            # A plain link with a fallback: the flags carry it, the fused read still counts it.
            flags = json.dumps(self._gates(), separators=(",", ":")) + "\t"
        else:
            flags = "" if self.pass_query else f"{_NO_QUERY_FLAG}\t"
        return f"{self.link_id}\t{self.redirect_type}\t{expires}\t{revoked}\t{flags}{self.location}"

    @classmethod
    def parse(cls, key: str, value: str) -> LinkEntry:
        fields = value.split("\t", 5)
        if len(fields) == 6:
            link_id, redirect_type, expires, revoked, flags, location = fields
        else:
            (link_id, redirect_type, expires, revoked, location), flags = fields, ""
        common = {
            "code": code_of_key(key),
            "domain_id": domain_of_key(key),
            "link_id": int(link_id),
            "location": location,
            "redirect_type": int(redirect_type),
            "expires_at": float(expires) if expires else None,
            "revoked": revoked == "1",
        }
        if not flags.startswith("{"):
            return cls(**common, pass_query=flags != _NO_QUERY_FLAG)
        gates = json.loads(flags)
        og_title, og_description, og_image = gates.get("og") or ("", "", "")
        ios_location, android_location = gates.get("app") or ("", "")
        return cls(
            **common,
            pass_query=bool(gates.get("q", 1)),
            password_hash=gates.get("pw", ""),
            max_visits=gates.get("max"),
            valid_since=gates.get("since"),
            rules=tuple(gates.get("rules", ())),
            variants=tuple((location, weight) for location, weight in gates.get("variants", ())),
            og_title=og_title,
            og_description=og_description,
            og_image=og_image,
            fallback=gates.get("fb", ""),
            ios_location=ios_location,
            android_location=android_location,
            failover=gates.get("fo", ""),
            track_conversions=bool(gates.get("cv")),
        )


def host_to_ascii(host: str) -> str:
    """A host name's ASCII (IDNA) form; raises idna.IDNAError for a name IDNA refuses.

    UTS #46 without transitional mapping (what browsers do), so `faß.de` stays `xn--fa-hia.de`
    rather than turning into the different domain `fass.de`.
    """
    return idna.encode(host, uts46=True, transitional=False).decode("ascii")


def redirect_location(long_url: str) -> str:
    """An IRI as an ASCII URI for the Location header: IDNA host, percent-encoded path/query."""
    parts = urlsplit(long_url)
    host = parts.hostname or ""  # lowercase: an ASCII host is its own ASCII form
    try:
        ascii_host = host if host.isascii() else host_to_ascii(host)
    except idna.IDNAError:
        ascii_host = host
    netloc = ascii_host if ":" not in ascii_host else f"[{ascii_host}]"
    if parts.port is not None:
        netloc = f"{netloc}:{parts.port}"
    if parts.username is not None:
        userinfo = parts.username + (f":{parts.password}" if parts.password is not None else "")
        netloc = f"{userinfo}@{netloc}"
    return iri_to_uri(urlunsplit(parts._replace(netloc=netloc)))


def app_location(url: str) -> str:
    """An app deep link (UrlLink.ios_url / android_url) as it goes into the Location header: a
    web address as redirect_location sends it; another scheme's URL (`myapp:///item/7`,
    `tel:+4930…`) percent-encoded only, never taken apart and put together again (urlunsplit
    drops the empty host of `myapp:///item`). "" stays ""."""
    if not url:
        return ""
    if url[:5].lower() == "http:" or url[:6].lower() == "https:":
        return redirect_location(url)
    return iri_to_uri(url)


def idn_ascii_url(long_url: str) -> str | None:
    """The URL as the redirect sends it (redirect_location: the host in IDNA's ASCII form) when
    its host is an internationalised name, else None.

    A look-alike such as `аpple.com` (a Cyrillic а) reads like the real name; its ASCII form,
    `xn--pple-43d.com`, does not. The pages and the API show it beside the URL so that whoever
    reviews a link sees where it really goes. A plain ASCII host needs no second spelling."""
    if long_url.isascii():  # nearly every URL: no parse
        return None
    try:
        host = urlsplit(long_url).hostname or ""
    except ValueError:
        return None
    if host.isascii():
        return None
    return redirect_location(long_url)


def decode_entry(key: str, value) -> LinkEntry | bool | None:
    """What a value read from Redis says: the entry, False for "no such code", None for none."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode()
    if value == _MISSING:
        return False
    return LinkEntry.parse(key, value)
