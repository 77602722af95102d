"""Which short domain a request is for: the redirect's view of links.models.Domain.

Every web process keeps a table of the domains (host → DomainRoute), loaded from the database
and used until a domain changes: the change bumps the table's counter in the node's generation
table, and with Redis goes out on the change stream to the other nodes, as a link change does
(links.cache). A redirect reads the table from memory: no query, no round trip.

A request's host is
- an extra domain's host: that domain;
- the default domain's, when it is SHORT_URL_BASE's host or one Django serves (ALLOWED_HOSTS);
  with SHORT_URL_BASE unset and ALLOWED_HOSTS "*", every host that is no extra domain;
- otherwise unknown: its codes answer 404 (route_for gives None).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import idna
from django.conf import settings
from django.core.signals import setting_changed
from django.db import transaction
from django.dispatch import receiver
from django.http.request import split_domain_port, validate_host

from core.node_state import GenerationTable, generations, local_entries_trusted
from links import cache as link_cache
from links.models import DEFAULT_DOMAIN_ID, WELL_KNOWN_PATHS, Domain, RedirectType

# The generation-table key of the domain table (no code contains "*"), and where its counter is:
# read on every redirect.
TABLE_GENERATION = "*domains*"
_TABLE_COUNTER = GenerationTable.offset(TABLE_GENERATION)
# Without trusted local memory (services mode while the node's sync lags), the table is read
# again at least this often: another node's domain change reaches such a process within a
# second.
_RELOAD_SECONDS = 1.0
# Hosts already looked up, per table: bounded, since the Host header is the client's to choose.
_MAX_MEMO_HOSTS = 1024


@dataclass(frozen=True, slots=True)
class DomainRoute:
    """A domain as the redirect needs it."""

    id: int
    host: str  # "" for the default domain
    # What a bare root (GET /) and an unknown code answer: a 302 to this entry's location, or
    # None for the 404 page. Entries without a link (link_id 0): nothing is counted for them.
    root_entry: link_cache.LinkEntry | None
    not_found_entry: link_cache.LinkEntry | None
    # What turns a code into its link's key here (link_cache.link_key): "" on the default
    # domain, "@<id>" on another.
    key_suffix: str = ""
    # The workspace whose links alone may use the domain; None: any workspace's.
    workspace_id: int | None = None
    # Where a stopped (expired, revoked, limit-reached) link of this domain sends its visitors
    # when it names no fallback of its own (serving/fallback.py); None: the 410 page.
    expired_entry: link_cache.LinkEntry | None = None
    # The app-association files served on this domain (links/services/app_links.py), encoded
    # once when the table is read, keyed by their path ("/.well-known/assetlinks.json"); a path
    # not here answers 404.
    well_known: Mapping[str, bytes] = field(default_factory=dict)

    @property
    def is_default(self) -> bool:
        return self.id == DEFAULT_DOMAIN_ID

    def takes_links_of(self, workspace_id: int | None) -> bool:
        """Whether a link of `workspace_id` may be put on this domain: one kept for a workspace
        takes that workspace's links alone."""
        return self.workspace_id in (None, workspace_id)


def _redirect_entry(url: str) -> link_cache.LinkEntry | None:
    if not url:
        return None
    return link_cache.LinkEntry(
        code="",
        link_id=0,
        location=link_cache.redirect_location(url),
        redirect_type=RedirectType.FOUND,
        expires_at=None,
        revoked=False,
        pass_query=False,
    )


def host_part(spelling: str) -> str:
    """The host a person typed, as typed: trimmed, a pasted URL's host (with its port, if any),
    without a path."""
    text = (spelling or "").strip()
    if "://" in text:
        try:
            text = urlsplit(text).netloc
        except ValueError:
            # urlsplit refuses an unclosed "[" (of an IPv6 address): what follows the scheme
            # stays as typed, for clean_host to refuse as a field error (not "http:").
            text = text.partition("://")[2]
    return text.split("/", 1)[0]


def host_form(spelling: str) -> str:
    """A domain's host as stored and looked up, however a person spells it: host_part's, with
    no port or final dot, lowercase, an internationalised name in its ASCII (IDNA) form.
    `Bücher.example`, `https://bücher.example/x` and `BÜCHER.EXAMPLE.` are all
    `xn--bcher-kva.example`, so a domain is found by the spelling it was added with, whichever
    way in (the domains command, the admin, the API's `domain`).

    Not a check: a name IDNA refuses stays as typed (a lookup finds nothing), and
    links.services.domains.clean_host says what is wrong with a host to be stored."""
    text = host_part(spelling).lower()
    name, colon, port = text.rpartition(":")
    if colon and port.isdigit():
        text = name
    text = text.rstrip(".")
    if text.isascii():
        return text
    try:
        return link_cache.host_to_ascii(text)
    except idna.IDNAError:
        return text


def hostname_of(host_header: str) -> str:
    """A Host header's name as domains are stored: lowercase, no port, no final dot."""
    name, _port = split_domain_port(host_header.lower())
    return name.rstrip(".")


class DomainTable:
    def __init__(self, routes: list[DomainRoute]):
        self.default = next(
            (route for route in routes if route.is_default),
            DomainRoute(DEFAULT_DOMAIN_ID, "", None, None),
        )
        self.by_host = {route.host: route for route in routes if not route.is_default}
        self.by_id = {route.id: route for route in self.by_host.values()}
        base = settings.SHORT_URL_BASE
        self.base_host = hostname_of(urlsplit(base).netloc) if base else ""
        self.allowed_hosts = list(settings.ALLOWED_HOSTS)
        # Every host is the default domain's: nothing to look up.
        self.all_default = not self.by_host and "*" in self.allowed_hosts
        self._memo: dict[str, DomainRoute | None] = {}

    def route_for(self, host_header: str) -> DomainRoute | None:
        if self.all_default:
            return self.default
        try:
            return self._memo[host_header]
        except KeyError:
            pass
        route = self._look_up(hostname_of(host_header))
        if len(self._memo) >= _MAX_MEMO_HOSTS:
            self._memo.clear()
        self._memo[host_header] = route
        return route

    def names_default(self, host: str) -> bool:
        """`host` (host_form's), named in a create, an import or a lookup, is the default
        domain's: it is no extra domain's, and the redirect serves the default domain on it
        (SHORT_URL_BASE's host, or one ALLOWED_HOSTS names; a bare "*" serves every host and
        names none)."""
        if not host or host in self.by_host:
            return False
        named = [pattern for pattern in self.allowed_hosts if pattern != "*"]
        return host == self.base_host or validate_host(host, named)

    def _look_up(self, host: str) -> DomainRoute | None:
        route = self.by_host.get(host)
        if route is not None:
            return route
        if host and (host == self.base_host or validate_host(host, self.allowed_hosts)):
            return self.default
        return None


_loaded: dict[str, object] = {"table": None, "generation": None, "at": 0.0}
_load_lock = threading.Lock()


@receiver(setting_changed)
def _settings_changed(setting: str, **kwargs) -> None:
    if setting in ("SHORT_URL_BASE", "ALLOWED_HOSTS", "REDIS_URL", "NODE_STATE_DIR"):
        forget_table()


def forget_table() -> None:
    """This process reads the table again on its next request (tests; settings changes)."""
    _loaded.update(table=None, generation=None, at=0.0)


def _load() -> DomainTable:
    routes = [
        DomainRoute(
            id=row["id"],
            host=row["host"],
            root_entry=_redirect_entry(row["root_redirect"]),
            not_found_entry=_redirect_entry(row["not_found_redirect"]),
            key_suffix=link_cache.link_key("", row["id"]),
            workspace_id=row["workspace_id"],
            expired_entry=_redirect_entry(row["expired_redirect"]),
            well_known={
                path: row[name].encode() for name, path in WELL_KNOWN_PATHS.items() if row[name]
            },
        )
        for row in Domain.objects.values(
            "id",
            "host",
            "root_redirect",
            "not_found_redirect",
            "workspace_id",
            "expired_redirect",
            *WELL_KNOWN_PATHS,
        )
    ]
    link_cache.database_reads["count"] += 1  # the fast path recycles the connection it used
    return DomainTable(routes)


def current_table() -> DomainTable:
    """This process's table, read again after any domain change."""
    table = _loaded["table"]
    # A change on this node bumps the counter at once; another node's reaches the counter
    # through the node's sync, which is trusted only while it keeps up: else a second's wait.
    if (
        table is not None
        and generations().read_at(_TABLE_COUNTER) == _loaded["generation"]
        and (local_entries_trusted() or time.monotonic() - _loaded["at"] < _RELOAD_SECONDS)  # type: ignore[operator]
    ):
        return table  # type: ignore[return-value]
    with _load_lock:
        generation = generations().read_at(_TABLE_COUNTER)  # before the read, as for links
        table = _load()
        _loaded.update(table=table, generation=generation, at=time.monotonic())
    return table


def route_for(meta: Mapping[str, str]) -> DomainRoute | None:
    """The domain of a request (WSGI environ or request.META); None for an unknown host."""
    return current_table().route_for(meta.get("HTTP_HOST") or meta.get("SERVER_NAME", ""))


def domains_changed() -> None:
    """After a domain is added, changed or removed: every process of every node reads the table
    again on its next request (now, and again once the change is committed, so that a read
    racing the commit cannot keep the old table)."""

    def announce() -> None:
        # Every process keeps the table, whether or not it keeps link entries: the node's
        # counter is bumped in every mode (announce_changed does it only with local redirects).
        generations().bump(TABLE_GENERATION)
        link_cache.announce_changed(
            [TABLE_GENERATION], consequence="other nodes see the domain change late"
        )

    announce()
    transaction.on_commit(announce)
