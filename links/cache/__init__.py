"""The link cache the redirect reads: one entry per code, a short negative entry for unknown ones,
and the set of custom aliases so that garbage which is not a generated code never reaches the DB.

Each web process also keeps its own entries (ProcessCache), each tagged with the code's counter
in the node's shared generation table (core.node_state) as read before the Redis or
database read; a change bumps the counter, so every process of the node drops its copy on its
next redirect. Without Redis (embedded mode) that is the only cache. With Redis
(SHORTURL_LOCAL_REDIRECTS) a change is also published on the `shorturl:changes` stream, which
every node's runner reads (apply_remote_changes) to bump its own counters; a process uses its
copies only while its node has read the stream within NODE_SYNC_MAX_LAG seconds.

A made-up code of the generated shape that the node's code filter (code_filter, built in
codesets from the database and added to by every create) certainly lacks is a 404 before any of
that: no round trip, no query, no negative entry.

One module per job, each importing only those before it: keys (what everything is keyed by) →
entries (LinkEntry and its text form) → local (this process's copies) → codesets (the alias set,
the code set, the code filter's build) → store (read, fill) → changes (drops, the change stream).
Callers use the names below (`from links import cache as link_cache`); a test that replaces one
patches the module that looks it up.
"""

from links.cache.changes import (
    CHANGES_KEPT,
    PENDING_CHANGES,
    VERSION_KEPT_SECONDS,
    CacheUnavailable,
    aliases_added_after_commit,
    announce_changed,
    apply_remote_changes,
    drop,
    drop_after_commit,
    drop_many,
    forget_aliases,
    forget_missing_after_commit,
    forget_sync_position,
    send_pending_changes,
)
from links.cache.codesets import (
    alias_may_exist,
    ensure_code_filter,
    ensure_code_set,
    set_lookup,
    set_member,
    set_of_kind,
)
from links.cache.entries import (
    LinkEntry,
    app_location,
    decode_entry,
    host_to_ascii,
    idn_ascii_url,
    redirect_location,
)
from links.cache.keys import (
    ALIAS_SET_COMPLETE,
    ALIAS_SET_KEY,
    CHANGES_EPOCH_KEY,
    CHANGES_KEY,
    CODE_SET_EPOCH,
    CODE_SET_KEY,
    CODE_SET_LOCK,
    code_of_key,
    domain_of_key,
    entry_key,
    key_of_link,
    link_key,
    version_key,
)
from links.cache.local import (
    ProcessCache,
    database_reads,
    generation_before_read,
    keep_here,
    process_cache,
)
from links.cache.store import (
    answer_here,
    cache_link,
    get_entry,
    load_entry,
    redis_version_before_read,
    store_entry,
    store_missing,
)

__all__ = [
    "ALIAS_SET_COMPLETE",
    "ALIAS_SET_KEY",
    "CHANGES_EPOCH_KEY",
    "CHANGES_KEPT",
    "CHANGES_KEY",
    "CODE_SET_EPOCH",
    "CODE_SET_KEY",
    "CODE_SET_LOCK",
    "PENDING_CHANGES",
    "VERSION_KEPT_SECONDS",
    "CacheUnavailable",
    "LinkEntry",
    "ProcessCache",
    "alias_may_exist",
    "aliases_added_after_commit",
    "announce_changed",
    "answer_here",
    "app_location",
    "apply_remote_changes",
    "cache_link",
    "code_of_key",
    "database_reads",
    "decode_entry",
    "domain_of_key",
    "drop",
    "drop_after_commit",
    "drop_many",
    "ensure_code_filter",
    "ensure_code_set",
    "entry_key",
    "forget_aliases",
    "forget_missing_after_commit",
    "forget_sync_position",
    "generation_before_read",
    "get_entry",
    "host_to_ascii",
    "idn_ascii_url",
    "keep_here",
    "key_of_link",
    "link_key",
    "load_entry",
    "process_cache",
    "redirect_location",
    "redis_version_before_read",
    "send_pending_changes",
    "set_lookup",
    "set_member",
    "set_of_kind",
    "store_entry",
    "store_missing",
    "version_key",
]
