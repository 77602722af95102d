"""The link cache the redirect reads: one entry per code, a short negative entry for unknown ones,
and the set of custom aliases so that garbage which is not a generated code never reaches the DB.

With Redis, entries are plain strings under raw keys (`shorturl:link:{<code>}`) rather than
pickles behind the Django cache, so that one Lua call can read an entry and push the visit in a
single round trip (serving.fused_read.fetch_and_record, which the redirect calls).

Each web process also keeps its own entries (ProcessCache), each tagged with the code's counter
in the node's shared generation table (core.node_state) as read before the Redis or
database read; a change bumps the counter, so every process of the node drops its copy on its
next redirect. Without Redis (embedded mode) that is the only cache. With Redis
(SHORTURL_LOCAL_REDIRECTS) a change is also published on the `shorturl:changes` stream, which
every node's runner reads (apply_remote_changes) to bump its own counters; a process uses its
copies only while its node has read the stream within NODE_SYNC_MAX_LAG seconds.

A made-up code of the generated shape that the node's code filter (links.code_filter, built
here from the database and added to by every create) certainly lacks is a 404 before any of
that: no round trip, no query, no negative entry.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import idna
from django.conf import settings
from django.db import DatabaseError, transaction
from django.utils.encoding import iri_to_uri
from redis.exceptions import RedisError

from core.node_state import (
    generations,
    local_entries_trusted,
    local_redirects,
    node_lock,
    state_dir,
)
from core.redis_conn import (
    live_redis_client,
    redis_client,
    redis_failed,
    sadd_all,
    uses_cluster,
    uses_redis,
)
from links import code_filter
from links.codes.shape import is_generated_shape
from links.models import DEFAULT_DOMAIN_ID, CodeType, UrlLink

logger = logging.getLogger(__name__)

_MISSING = "-"

# A link's key, which everything here is keyed by (entries, versions, the alias set, this
# process's copies, the change stream): its code on the default domain, `code@<domain id>` on an
# extra one (links.models.Domain), so that one alias on two domains is two keys while every
# default-domain code keeps the key it always had. Generated codes are unique across domains:
# the code set and the code filter hold them bare.
_DOMAIN_MARK = "@"


def link_key(code: str, domain_id: int) -> str:
    return code if domain_id == DEFAULT_DOMAIN_ID else f"{code}{_DOMAIN_MARK}{domain_id}"


def code_of_key(key: str) -> str:
    return key.partition(_DOMAIN_MARK)[0]


def domain_of_key(key: str) -> int:
    _, marked, domain_id = key.partition(_DOMAIN_MARK)
    return int(domain_id) if marked else DEFAULT_DOMAIN_ID


def key_of_link(link: UrlLink) -> str:
    return link_key(link.code, link.domain_id)


def entry_key(key: str) -> str:
    """Redis key of a link's entry; the {key} hash tag keeps it in one slot with its version."""
    return f"shorturl:link:{{{key}}}"


def version_key(key: str) -> str:
    return f"shorturl:version:{{{key}}}"


# Services mode: every custom alias in one Redis set, so "is this an alias?" is one SISMEMBER
# (inside the redirect's Lua call) however many aliases exist. The marker member, which no alias
# can be, says the set was loaded whole: without it (Redis restarted or evicted the set) the
# set is loaded again from the database before it is trusted.
ALIAS_SET_KEY = "shorturl:aliases"
ALIAS_SET_COMPLETE = "*complete*"
# Every generated code, with the same "complete" marker, so that a made-up code of the generated
# shape (its check character can be computed by anyone) is a 404 without a query. Loaded whole
# in the background by one node's runner (ensure_code_set), added to by every create; until it
# is complete, such codes are looked up in the database as before. A node whose code filter is
# complete and trusted asks it no more (see answer_here): it answers processes that do not
# trust their memory, or have no filter yet.
CODE_SET_KEY = "shorturl:{codes}"
CODE_SET_LOCK = "shorturl:{codes}:loading"
# Bumped whenever the set is marked incomplete: a load whose database read began before that
# may not mark the set complete (it could lack the very code that made it incomplete).
CODE_SET_EPOCH = "shorturl:{codes}:epoch"
# KEYS: code set, epoch. ARGV: epoch read before the load, marker, ttl.
_MARK_CODE_SET_COMPLETE = """
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return 0 end
redis.call('SADD', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""

# The generation-table key of the alias set (no code contains "*").
_ALIASES_GENERATION = "*aliases*"
# Services mode: every change to a cached code, for the other nodes (see apply_remote_changes).
# An epoch value set once per Redis data set tells a node that Redis lost the stream (restart
# without persistence), after which nothing it cached can be trusted.
CHANGES_KEY = "shorturl:changes"
CHANGES_EPOCH_KEY = "shorturl:changes:epoch"
# Entries kept on the stream: far more than a node reads between two syncs.
CHANGES_KEPT = 100_000
# Per changed code (version_key): a counter bumped with each change, so that a cache fill which
# read the database before the change cannot store what it read after the change's DEL. Kept
# far longer than a fill takes from its database read to its SET; short enough that creating
# links in bulk leaves few counters behind (~70 bytes each).
VERSION_KEPT_SECONDS = 300


# The entry's flags field, present only when a link differs from the default: "noquery" for a
# link that keeps visitors' query strings to itself, or a JSON object for a gated link (GATE_KEYS
# below). Entries of default links keep the five-field form older code reads (a rolling upgrade,
# and entries cached before it, stay valid). JSON escapes tabs, so a field never holds one.
_NO_QUERY_FLAG = "noquery"
# The revoked field of a gated, active link: serving.fused_read's Lua script pushes a visit
# only for "0", so a gated link's clicks are decided (and counted, or not) in serving/gates.py.
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
    # ({"device"?, "os"?, "country"?, "language"?, "location"}, …): "location" is the rule's url
    # as it goes into the Location header.
    rules: tuple[dict, ...] = ()
    variants: tuple[tuple[str, int], ...] = ()  # (location, weight)
    # Set by links/gates.destination on the entry a visitor is sent on with, when a rule or a
    # variant chose its location: the visit records it ("" is the long URL). Never cached.
    destination: str = ""
    domain_id: int = DEFAULT_DOMAIN_ID  # part of the key, never of the cached value

    @classmethod
    def from_link(cls, link: UrlLink) -> LinkEntry:
        return cls(
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
        )

    # A password, a visit cap, rules or variants: the click is decided in serving/gates.py. Worked
    # out once per entry, not on each redirect that asks (every redirect does).
    gated: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        gated = bool(self.password_hash or self.max_visits or self.rules or self.variants)
        object.__setattr__(self, "gated", gated)

    @property
    def key(self) -> str:
        return link_key(self.code, self.domain_id)

    def is_gone(self, now: float | None = None) -> bool:
        """Revoked or past its expiry: the redirect answers 410."""
        if self.revoked:
            return True
        return self.expires_at is not None and self.expires_at <= (now or time.time())

    def _gates(self) -> dict:
        gates: dict = {"q": int(self.pass_query)}
        if self.password_hash:
            gates["pw"] = self.password_hash
        if self.max_visits:
            gates["max"] = self.max_visits
        if self.rules:
            gates["rules"] = list(self.rules)
        if self.variants:
            gates["variants"] = [list(variant) for variant in self.variants]
        return gates

    # "id<TAB>redirect type<TAB>expiry or empty<TAB>revoked 0/1/2<TAB>[flags<TAB>]location": the
    # Lua script in serving.fused_read reads the first four fields, so keep the two in step. A
    # location never holds a tab (it is percent-encoded), so the field count tells the forms
    # apart.
    def serialize(self) -> str:
        expires = "" if self.expires_at is None else repr(self.expires_at)
        revoked = "1" if self.revoked else "0"
        if self.gated:
            flags = json.dumps(self._gates(), separators=(",", ":")) + "\t"
            revoked = "1" if self.revoked else _GATED
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
        return cls(
            **common,
            pass_query=bool(gates.get("q", 1)),
            password_hash=gates.get("pw", ""),
            max_visits=gates.get("max"),
            rules=tuple(gates.get("rules", ())),
            variants=tuple((location, weight) for location, weight in gates.get("variants", ())),
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


class ProcessCache:
    """This process's entries, valid while the code's counter in the node's table is unchanged.

    Values are kept as they are (no pickling); at most MAX_ENTRIES, the oldest dropped first.
    """

    MAX_ENTRIES = 100_000

    def __init__(self):
        self._entries: dict[str, tuple[int, float, object]] = {}

    def get(self, key: str):
        item = self._entries.get(key)
        if item is None:
            return None
        generation, expires, value = item
        if generation != generations().read(key) or expires <= time.monotonic():
            self._entries.pop(key, None)
            return None
        return value

    def put(self, key: str, value, *, ttl: float, generation: int) -> None:
        if len(self._entries) >= self.MAX_ENTRIES:
            # The oldest tenth at once: dropping one entry at a time from the front of a dict
            # gets slow (its iterator skips every slot freed before), up to ms per put.
            with contextlib.suppress(KeyError, RuntimeError):
                for oldest in list(itertools.islice(self._entries, self.MAX_ENTRIES // 10)):
                    self._entries.pop(oldest, None)
        self._entries[key] = (generation, time.monotonic() + ttl, value)

    def invalidate(self, key: str) -> None:
        """Every process's copy of `key` stops counting (this one's at once)."""
        self._entries.pop(key, None)
        generations().bump(key)

    def clear(self) -> None:
        self._entries.clear()


process_cache = ProcessCache()


def keep_here(code: str, entry: LinkEntry | bool | None, generation: int | None) -> None:
    """Keep a looked-up answer (an entry, or False: no such code) in this process, tagged with
    the generation read before the lookup; nothing without a tag or an answer."""
    if generation is None or entry is None:
        return
    ttl = settings.SHORTURL_CACHE_TTL if entry else settings.SHORTURL_NEGATIVE_CACHE_TTL
    process_cache.put(code, entry, ttl=ttl, generation=generation)


def set_of_kind(alias_shaped: bool) -> str:
    """The Redis set that knows every code of this shape: the aliases, or the generated codes."""
    return ALIAS_SET_KEY if alias_shaped else CODE_SET_KEY


def generation_before_read(code: str) -> int | None:
    """The tag for an entry about to be read from Redis or the database, when this process
    keeps its own entries; else None."""
    return generations().read(code) if local_redirects() else None


def decode_entry(key: str, value) -> LinkEntry | bool | None:
    """What a value read from Redis says: the entry, False for "no such code", None for none."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode()
    if value == _MISSING:
        return False
    return LinkEntry.parse(key, value)


def answer_here(key: str, *, alias_shaped: bool) -> LinkEntry | bool | None:
    """What this process can say about the link `key` without a round trip or a query, once
    its node's memory is trusted: its own entry; False for a code no link has (not in this
    process's alias set, or not in the node's code filter, which leaves no negative entry: a
    flood of made-up codes would push real entries out of the cache); None when Redis or the
    database must say."""
    local = process_cache.get(key)
    if local is not None:
        return local
    if alias_shaped:
        return False if _certainly_no_alias(key) else None
    return False if code_filter.certainly_absent(code_of_key(key)) else None


def set_member(key: str, alias_shaped: bool) -> str:
    """What the set of the key's kind holds for it: the alias set holds keys, the code set bare
    codes (generated codes are unique across domains)."""
    return key if alias_shaped else code_of_key(key)


def get_entry(key: str, *, alias_shaped: bool = False) -> LinkEntry | bool | None:
    """The cached entry, False when the link is known not to exist, None when not cached."""
    if local_entries_trusted():
        local = answer_here(key, alias_shaped=alias_shaped)
        if local is not None or not uses_redis():
            return local
    client = live_redis_client()
    if client is None:
        return None  # Redis paused after a failure: straight to the database
    try:
        return decode_entry(key, client.get(entry_key(key)))
    except RedisError as exc:
        redis_failed(exc, consequence="links are read from the database")
        return None


# Stores a Redis entry only if no change to the code happened since its version was read
# (before the database read): a redirect that read the old row must not put it back after the
# change's DEL. KEYS: entry, version. ARGV: value, ttl, version read.
_PUT_IF_UNCHANGED = """
if (redis.call('GET', KEYS[2]) or '0') == ARGV[3] then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  return 1
end
return 0
"""
_put_if_unchanged_script = None


def redis_version_before_read(code: str) -> str | None:
    """Services mode: the code's change counter in Redis, read before a database read whose
    result is to be cached there; None without Redis (or while it is paused)."""
    client = live_redis_client() if uses_redis() else None
    if client is None:
        return None
    try:
        return (client.get(version_key(code)) or b"0").decode()
    except RedisError as exc:
        redis_failed(exc, consequence="links are not cached")
        return None


def _put(key: str, value: str, ttl: int, version: str | None) -> None:
    client = live_redis_client()
    if client is None:
        return
    global _put_if_unchanged_script
    try:
        if version is None:  # the caller knows of no concurrent change (a fresh row)
            client.set(entry_key(key), value, ex=ttl)
            return
        if _put_if_unchanged_script is None:
            _put_if_unchanged_script = client.register_script(_PUT_IF_UNCHANGED)
        _put_if_unchanged_script(
            keys=[entry_key(key), version_key(key)],
            args=[value, ttl, version],
            client=client,
        )
    except RedisError as exc:
        redis_failed(exc, consequence="links are not cached")


def store_entry(
    entry: LinkEntry, *, generation: int | None = None, version: str | None = None
) -> None:
    """Cache `entry`: in this process when `generation` (generation_before_read's tag) is
    given, and in Redis, unless the code changed since `version` (redis_version_before_read)."""
    keep_here(entry.key, entry, generation)
    if uses_redis():
        _put(entry.key, entry.serialize(), settings.SHORTURL_CACHE_TTL, version)


def store_missing(key: str, *, generation: int | None = None, version: str | None = None) -> None:
    keep_here(key, False, generation)
    if uses_redis():
        _put(key, _MISSING, settings.SHORTURL_NEGATIVE_CACHE_TTL, version)


# How many times this process read links from the database: the redirect's fast path recycles
# database connections (as Django does after a request) only when a read happened.
database_reads = {"count": 0}


def load_entry(key: str) -> LinkEntry | None:
    """The link for `key` from the database, cached (its absence too); None when unknown."""
    generation = generation_before_read(key)
    version = redis_version_before_read(key)
    database_reads["count"] += 1
    link = UrlLink.objects.filter(code=code_of_key(key), domain_id=domain_of_key(key)).first()
    if link is None:
        store_missing(key, generation=generation, version=version)
        return None
    return cache_link(link, generation=generation, version=version)


def cache_link(
    link: UrlLink, *, generation: int | None = None, version: str | None = None
) -> LinkEntry:
    entry = LinkEntry.from_link(link)
    store_entry(entry, generation=generation, version=version)
    return entry


class CacheUnavailable(Exception):
    """A cached entry could not be dropped: a change to the link must not be reported done."""


def _publish(pipe, keys: list[str]) -> None:
    """Queue, on a pipeline, the stream entry that tells the other nodes these keys changed
    (one entry for the lot: a bulk create publishes 1,000 codes in one XADD)."""
    pipe.xadd(CHANGES_KEY, {"c": " ".join(keys)}, maxlen=CHANGES_KEPT, approximate=True)


def _forget(
    client, codes: list[str], *, bump_versions: bool = True, also=None, transaction: bool = False
) -> None:
    """Drop these codes' Redis entries, bump their versions (so a fill that read the database
    before the change is refused) and tell the other nodes. `also(pipe)` queues more commands.

    On a single Redis it is one pipeline (one MULTI with `transaction`). On a Cluster the notice
    goes only once the drops are acknowledged: its pipeline sends to each master on its own, and
    a node reading the notice first could re-read the old entry under its new tag.
    """
    cluster = uses_cluster()
    with client.pipeline(transaction=transaction and not cluster) as pipe:
        if cluster:  # one key per command: a Cluster pipeline routes each to its slot
            for code in codes:
                pipe.delete(entry_key(code))
        else:
            pipe.delete(*(entry_key(code) for code in codes))
        if bump_versions:
            for code in codes:
                pipe.incr(version_key(code))
                pipe.expire(version_key(code), VERSION_KEPT_SECONDS)
        if also is not None:
            also(pipe)
        if not cluster:
            _publish(pipe, codes)
        pipe.execute()
    if cluster:
        _publish(client, codes)


# --- Changes whose Redis part could not be done (Redis paused or failing) --------------------
# Kept in the node's state dir and sent by the node's sync before it reads the stream, so that
# no node (nor Redis's own entries and sets) keeps a changed link, alias or code for a day.
PENDING_CHANGES = "changes.pending"
_PENDING_LOCK = "changes-pending"


def _remember_pending(keys: list[str]) -> None:
    with node_lock(_PENDING_LOCK), open(state_dir() / PENDING_CHANGES, "a") as handle:
        handle.write("".join(key + "\n" for key in keys))


def send_pending_changes(client) -> int:
    """Do the Redis part of the changes noted while Redis was out of reach; returns how many."""
    path = state_dir() / PENDING_CHANGES
    if not path.exists():
        return 0
    with node_lock(_PENDING_LOCK):
        keys = sorted(set(path.read_text().split()))
        codes = [key for key in keys if key != _ALIASES_GENERATION]
        if _ALIASES_GENERATION in keys:
            _drop_alias_set(client)
        if codes:
            _forget(client, codes)
            if _generated_codes_of(codes):
                _mark_code_set_incomplete(client)  # reloaded before it is trusted
        path.unlink()
    return len(keys)


def _changed_here(keys: list[str]) -> None:
    """Every process of this node drops its copies of `keys` on its next redirect, and the
    node's code filter holds the generated ones (a new code is found on the very next
    redirect; an edited one is in it already)."""
    if local_redirects():
        code_filter.add(_generated_codes_of(keys))
        for key in keys:
            process_cache.invalidate(key)


def _announce(keys: list[str], send: Callable[[object], None], *, consequence: str) -> None:
    """A change to `keys`: this node's processes drop their copies at once; `send(client)` does
    the Redis part (drops, sets) and tells the other nodes. When Redis is out of reach (failing,
    or paused after a failure) the change is noted for the node's sync, which does it once Redis
    answers (send_pending_changes), so no node keeps a changed key for a day."""
    _changed_here(keys)
    if not uses_redis():
        return
    client = live_redis_client()
    try:
        if client is None:
            raise RedisError("paused after an earlier failure")
        send(client)
    except RedisError as exc:
        redis_failed(exc, consequence=consequence)
        _remember_pending(keys)


def announce_changed(keys: list[str], *, consequence: str) -> None:
    """Keys of something kept beside the link entries (the domain table, links.domains) that
    changed: every process of every node reads it again on its next request."""

    def send(client) -> None:
        with client.pipeline(transaction=False) as pipe:
            _publish(pipe, keys)
            pipe.execute()

    _announce(keys, send, consequence=consequence)


def drop(key: str) -> None:
    """Remove the cached entry everywhere; raises CacheUnavailable when Redis cannot be reached.

    A stale entry would keep redirecting for up to SHORTURL_CACHE_TTL, so the caller must not
    go on as if the change had taken effect.
    """
    _changed_here([key])
    if not uses_redis():
        return
    try:
        # One MULTI on a single Redis (on a Cluster a partial failure raises all the same, and
        # the change is rolled back).
        _forget(redis_client(), [key], transaction=True)
    except RedisError as exc:
        logger.error("Redis unavailable; the cached entry for %s could not be dropped", key)
        raise CacheUnavailable(
            "The link cache cannot be reached right now, so nothing was changed. "
            "Please try again in a moment."
        ) from exc


def forget_missing_after_commit(keys: list[str]) -> None:
    """New links' keys: once committed, drop any "no such code" entry a redirect cached for them
    before they existed (best effort: at worst the entry runs out after its short TTL)."""

    generated = _generated_codes_of(keys)

    def send(client) -> None:
        # No version bumps: a fill racing a code's creation could at worst cache "no such code"
        # for SHORTURL_NEGATIVE_CACHE_TTL, and a bulk create would leave 1,000 counters behind.
        _forget(
            client,
            keys,
            bump_versions=False,
            also=(lambda pipe: pipe.sadd(CODE_SET_KEY, *generated)) if generated else None,
        )

    if keys:
        transaction.on_commit(lambda: _announce(keys, send, consequence="links are not cached"))


def _generated_codes_of(keys: list[str]) -> list[str]:
    """The generated codes among these keys' codes (the code set and filter hold them bare)."""
    codes = (code_of_key(key) for key in keys)
    return [code for code in codes if is_generated_shape(code)]


def drop_after_commit(key: str) -> None:
    """Drop again once the change is committed: a redirect may have re-cached the old row."""

    def again() -> None:
        try:
            drop(key)
        except CacheUnavailable:
            # Logged by drop. A redirect may have re-cached the old row since the first drop:
            # the node's sync drops it once Redis answers again.
            _remember_pending([key])

    transaction.on_commit(again)


def alias_may_exist(key: str) -> bool:
    """False when `key` is certainly no custom alias's (so no query is needed to say 404)."""
    if not uses_redis():
        return key in _process_aliases()
    if local_entries_trusted() and _certainly_no_alias(key):
        return False
    client = live_redis_client()
    if client is None:
        return True  # the set is out of reach: let the database decide
    try:
        complete, member = set_lookup(client, ALIAS_SET_KEY, key)
        if not complete:
            _load_alias_set(client)
            complete, member = set_lookup(client, ALIAS_SET_KEY, key)
    except RedisError as exc:
        redis_failed(exc, consequence="links are read from the database")
        return True
    return member or not complete


def set_lookup(client, key: str, code: str) -> tuple[bool, bool]:
    """(the set is complete, it holds `code`) for the alias set or the code set."""
    with client.pipeline(transaction=False) as pipe:
        pipe.sismember(key, ALIAS_SET_COMPLETE)
        pipe.sismember(key, code)
        complete, member = pipe.execute()
    return bool(complete), bool(member)


def _alias_keys():
    """Every custom alias's key (an alias on an extra domain is `alias@<domain id>`)."""
    database_reads["count"] += 1  # also on the redirect path (see load_entry)
    aliases = UrlLink.objects.filter(code_type=CodeType.CUSTOM).values_list("code", "domain_id")
    return (link_key(code, domain_id) for code, domain_id in aliases.iterator(chunk_size=5000))


def _load_alias_set(client) -> None:
    """Every alias from the database into the set, then the marker that it is complete. An
    alias created meanwhile is added by its own create, so none is missed. The set lives a
    cache TTL, so an alias whose add was lost to a Redis failure is found within a day."""
    sadd_all(client, ALIAS_SET_KEY, _alias_keys())
    client.sadd(ALIAS_SET_KEY, ALIAS_SET_COMPLETE)
    client.expire(ALIAS_SET_KEY, settings.SHORTURL_CACHE_TTL)


def _generated_codes():
    return (
        UrlLink.objects.exclude(code_type=CodeType.CUSTOM)
        .values_list("code", flat=True)
        .iterator(chunk_size=5000)
    )


def ensure_code_set() -> bool:
    """Services mode, the node's runner: load the code set whole unless it is complete (one
    node at a time, under a Redis lock). Returns True when it loaded it. (A create that could
    not add its codes leaves them to send_pending_changes, which marks the set incomplete.)"""
    client = live_redis_client() if uses_redis() else None
    if client is None:
        return False
    if client.sismember(CODE_SET_KEY, ALIAS_SET_COMPLETE):
        return False
    token = uuid.uuid4().hex
    if not client.set(CODE_SET_LOCK, token, nx=True, ex=600):
        return False  # another node loads it
    try:
        epoch = (client.get(CODE_SET_EPOCH) or b"0").decode()
        sadd_all(client, CODE_SET_KEY, _generated_codes())
        # Loaded again daily: bounds how long a code whose add was lost (with its node) hides.
        return _mark_code_set_complete(client, epoch)
    finally:
        if client.get(CODE_SET_LOCK) == token.encode():
            client.delete(CODE_SET_LOCK)


def _mark_code_set_incomplete(client) -> None:
    with client.pipeline(transaction=not uses_cluster()) as pipe:
        pipe.incr(CODE_SET_EPOCH)
        pipe.srem(CODE_SET_KEY, ALIAS_SET_COMPLETE)
        pipe.execute()


def _mark_code_set_complete(client, epoch: str) -> bool:
    """Set the marker unless the set was marked incomplete since `epoch` was read."""
    done = client.eval(
        _MARK_CODE_SET_COMPLETE,
        2,
        CODE_SET_KEY,
        CODE_SET_EPOCH,
        epoch,
        ALIAS_SET_COMPLETE,
        settings.SHORTURL_CACHE_TTL,
    )
    return bool(done)


_aliases_loaded = {"at": -1e9}
# With Redis an alias created on any node makes every process of every node reload the set;
# between two reloads a process asks Redis's alias set instead (see _certainly_no_alias).
_ALIAS_RELOAD_SECONDS = 1.0


def _process_aliases(*, throttled: bool = False) -> frozenset[str] | None:
    """This process's copy of every alias, reloaded after any alias change; None when it is
    out of date and `throttled` holds its reload back for now."""
    aliases = process_cache.get(_ALIASES_GENERATION)
    if aliases is None:
        now = time.monotonic()
        if throttled and now - _aliases_loaded["at"] < _ALIAS_RELOAD_SECONDS:
            return None
        _aliases_loaded["at"] = now
        generation = generation_before_read(_ALIASES_GENERATION)
        aliases = frozenset(_alias_keys())
        process_cache.put(
            _ALIASES_GENERATION, aliases, ttl=settings.SHORTURL_CACHE_TTL, generation=generation
        )
    return aliases


def _certainly_no_alias(code: str) -> bool:
    """With trusted local entries: True when this process's alias set is current and lacks
    `code`, so an unknown alias-shaped code costs no round trip and no query."""
    aliases = _process_aliases(throttled=True)
    return aliases is not None and code not in aliases


def aliases_added_after_commit(aliases: list[str]) -> None:
    """New aliases join the alias set now and again once their links are committed (a set
    loaded from the database in between would not hold them yet)."""

    def add() -> None:
        def send(client) -> None:
            with client.pipeline(transaction=False) as pipe:
                pipe.sadd(ALIAS_SET_KEY, *aliases)
                _publish(pipe, [_ALIASES_GENERATION])
                pipe.execute()

        _announce(
            [_ALIASES_GENERATION], send, consequence="aliases are checked against the database"
        )

    if aliases:
        add()
        transaction.on_commit(add)


def _drop_alias_set(client) -> None:
    """Drop Redis's alias set (loaded again from the database when next needed) and tell the
    other nodes to reload theirs."""
    with client.pipeline(transaction=False) as pipe:
        pipe.delete(ALIAS_SET_KEY)
        _publish(pipe, [_ALIASES_GENERATION])
        pipe.execute()


def forget_aliases() -> None:
    """Drop the alias set everywhere (it is loaded again from the database when next needed)."""
    _announce(
        [_ALIASES_GENERATION],
        _drop_alias_set,
        consequence="the alias set is loaded again from the database",
    )


# --- Other nodes' changes (services mode; run by the node's runner) --------------------------

_sync: dict[str, object] = {"last_id": None, "epoch": None, "at": 0.0}
# A runner that has not read the stream for this long may have missed trimmed entries.
_RESYNC_AFTER_SECONDS = 60.0


def apply_remote_changes(*, wait: float = 0.0) -> int:
    """Bump this node's counters for every key changed since the last call (on any node), then
    note the sync time. Returns how many changes were read.

    `wait`: when nothing new is there yet, wait up to this many seconds for a change (a
    blocking read of the stream, which returns as soon as another node writes to it): the node's
    sync thread calls it in a loop, so a change reaches every node within milliseconds, not at
    the next poll. A link created through one node is then found on the others at once (their
    code filters learn it from the stream).

    It goes on from where this process last read, also when its sync thread takes the lock
    back from another process: the stream still holds what came since (re-reading what the
    other process applied costs only re-reads). Started with no place to continue from, after
    a pause longer than the stream is sure to cover, or after Redis lost the stream, it bumps
    every counter instead: every process re-reads once.
    """
    client = redis_client()
    started = time.monotonic()
    send_pending_changes(client)
    table = generations()
    epoch = client.get(CHANGES_EPOCH_KEY)
    if epoch is None:
        client.set(CHANGES_EPOCH_KEY, uuid.uuid4().hex, nx=True)
        epoch = client.get(CHANGES_EPOCH_KEY)
    read = 0
    if (
        _sync["last_id"] is None
        or epoch != _sync["epoch"]
        or started - float(_sync["at"]) > _RESYNC_AFTER_SECONDS
    ):
        # Read the stream's end before bumping: a change after it is read on the next call.
        newest = client.xrevrange(CHANGES_KEY, count=1)
        # Codes created between the filter's last add and that end are in no stream read to
        # come: the filter is unused until the build below has read them from the database.
        code_filter.mark_incomplete()
        table.bump_all()
        _sync.update(last_id=newest[0][0] if newest else b"0-0", epoch=epoch)
    else:
        read = _read_changes(client, table, wait=wait)
    _sync["at"] = started
    table.mark_synced(started)
    if local_redirects() and code_filter.needs_build(max_age=settings.SHORTURL_CACHE_TTL):
        # Here, after the stream position is set, so that every code is in the build's
        # database read or read from the stream later (and noted in the build's journal).
        # The sync goes on reading the stream during a long build, so the node's processes
        # keep trusting their entries meanwhile.
        _build_code_filter(meanwhile=lambda: _keep_in_sync(client, table))
    return read


def _read_changes(client, table, *, wait: float = 0.0) -> int:
    """Apply the stream's entries after the sync's position; returns how many were read. The
    first read waits up to `wait` seconds for an entry (redis-py's block=0 would wait forever)."""
    last_id = _sync["last_id"]
    read = 0
    block = max(1, round(wait * 1000)) if wait > 0 else None
    while True:
        answer = client.xread({CHANGES_KEY: last_id}, count=1000, block=block)
        block = None
        entries = answer[0][1] if answer else []
        keys = [key for _, fields in entries for key in fields.get(b"c", b"").decode().split()]
        if keys and local_redirects():
            # Before the bumps: once a process re-reads a code, the filter holds it.
            code_filter.add(_generated_codes_of(keys))
        for key in keys:
            table.bump(key)
        if entries:
            last_id = entries[-1][0]
        read += len(entries)
        if len(entries) < 1000:
            break
    _sync["last_id"] = last_id
    return read


def _keep_in_sync(client, table) -> None:
    """During a long build in the sync: read the stream as the sync would have meanwhile."""
    now = time.monotonic()
    if now - float(_sync["at"]) >= settings.NODE_SYNC_SECONDS:
        _read_changes(client, table)
        _sync["at"] = now
        table.mark_synced(now)


# --- The node's code filter (links.code_filter) ----------------------------------------------

# After a failed build (the database out of reach), the next try waits this long.
_FILTER_RETRY_SECONDS = 30.0
_filter_build: dict[str, float | bool] = {"next_try": 0.0, "built_since_start": False}


def _generated_code_count() -> int:
    return UrlLink.objects.exclude(code_type=CodeType.CUSTOM).count()


def _build_code_filter(meanwhile: Callable[[], object] | None = None) -> bool:
    """Build the node's code filter from the database; False when it could not (for now)."""
    if time.monotonic() < float(_filter_build["next_try"]):
        return False
    try:
        code_filter.build(_generated_codes, expected=_generated_code_count(), meanwhile=meanwhile)
    except DatabaseError as exc:
        _filter_build["next_try"] = time.monotonic() + _FILTER_RETRY_SECONDS
        logger.warning(
            "The code filter could not be built (%s); made-up codes are looked up as without "
            "it until it is",
            exc,
        )
        return False
    return True


def ensure_code_filter() -> bool:
    """Embedded mode, the node's runner: build the node's code filter when the runner starts
    in this process and again whenever it is incomplete, full or a day old. Returns True when
    it built it."""
    if not _filter_build["built_since_start"]:
        # Rows may have come while no runner ran (a database restored from a backup, links
        # created with another state dir): the old filter is not used until this build.
        code_filter.mark_incomplete()
    elif not code_filter.needs_build(max_age=settings.SHORTURL_CACHE_TTL):
        return False
    built = _build_code_filter()
    if built:
        _filter_build["built_since_start"] = True
    return built


def forget_sync_position() -> None:
    """The next apply_remote_changes starts afresh, and the next ensure_code_filter builds
    (tests)."""
    _sync.update(last_id=None, epoch=None, at=0.0)
    _filter_build.update(next_try=0.0, built_since_start=False)
