"""The redirect's cache read and its visit push in one Redis call (one Lua script), so that a
cached redirect costs one round trip.

Here rather than in links.cache: the read is the link cache's, the visit's message analytics'
(analytics.capture.fused_push), and only the redirect's layer may use both.
"""

import time

from redis.exceptions import RedisError

from analytics.capture import fused_push
from core.node_state import generations, local_entries_trusted
from core.redis_conn import live_redis_client, redis_failed, uses_cluster, uses_redis
from links.cache import (
    ALIAS_SET_COMPLETE,
    LinkEntry,
    answer_here,
    code_of_key,
    decode_entry,
    entry_key,
    keep_here,
    set_lookup,
    set_member,
    set_of_kind,
)

# Reads the entry and, when it is an active plain link (revoked field "0": not gated, no start
# still to come, links.cache.entries), pushes the visit with the link id filled in:
# the whole redirect in one round trip. On a miss it asks the set of the code's kind (KEYS[3]:
# the alias set or the code set), so a made-up code is a 404 in that same round trip (ARGV[3]
# the set's "complete" marker, ARGV[4] the code). ARGV[1] is now (epoch seconds), ARGV[2] the
# visit message without its opening brace, to which the link id is prefixed. "-" is the link
# cache's own "no such code" value (decode_entry reads it as False).
_FETCH_AND_RECORD = """
local value = redis.call('GET', KEYS[1])
if not value then
  -- A code that the complete set of its kind does not hold is certainly unknown.
  if redis.call('SISMEMBER', KEYS[3], ARGV[3]) == 1
      and redis.call('SISMEMBER', KEYS[3], ARGV[4]) == 0 then
    return '-'
  end
  return false
end
local link_id, expires, revoked = string.match(value, '^(%d+)\t%d+\t([^\t]*)\t(%d)\t')
if link_id and revoked == '0' and (expires == '' or tonumber(expires) > tonumber(ARGV[1])) then
  redis.call('RPUSH', KEYS[2], '{"l":' .. link_id .. ',' .. ARGV[2])
end
return value
"""
_fetch_and_record_script = None


def fetch_and_record(
    key: str, meta, event_id: str, *, alias_shaped: bool = False
) -> tuple[LinkEntry | bool | None, bool]:
    """links.cache.get_entry, and with Redis also the visit push in the same call.

    Returns (entry, recorded): `recorded` says the visit is already in the buffer, so the
    caller must not record it again.
    """
    generation = None
    if local_entries_trusted():  # always without Redis
        local = answer_here(key, alias_shaped=alias_shaped)
        if local is not None or not uses_redis():
            return local, False  # a hit: the caller spools the visit, no round trip at all
        generation = generations().read(key)
    client = live_redis_client()
    if client is None:
        return None, False
    if uses_cluster():
        return _fetch_on_cluster(client, key, generation, alias_shaped=alias_shaped)
    global _fetch_and_record_script
    if _fetch_and_record_script is None:
        _fetch_and_record_script = client.register_script(_FETCH_AND_RECORD)
    now = time.time()
    code = code_of_key(key)
    buffer_key, message_body = fused_push(meta, code, event_id)
    try:
        value = _fetch_and_record_script(
            keys=[entry_key(key), buffer_key, set_of_kind(alias_shaped)],
            args=[repr(now), message_body, ALIAS_SET_COMPLETE, set_member(key, alias_shaped)],
            client=client,
        )
    except RedisError as exc:
        redis_failed(exc, consequence="links are read and visits stored in the database")
        return None, False
    entry = decode_entry(key, value)
    keep_here(key, entry, generation)
    # As the script decided: a plain link's entry (revoked field "0"), not past its expiry.
    recorded = isinstance(entry, LinkEntry) and entry.counted_by_read and not entry.is_gone(now)
    return entry, recorded


def _fetch_on_cluster(
    client, key: str, generation: int | None, *, alias_shaped: bool
) -> tuple[LinkEntry | bool | None, bool]:
    """fetch_and_record on a Redis Cluster: the entry, the alias set and the buffer live in
    different slots, so the entry is read alone (and the alias set asked on a miss); the caller
    records the visit (to the node's spool, or one RPUSH)."""
    try:
        entry = decode_entry(key, client.get(entry_key(key)))
        if entry is None:
            complete, member = set_lookup(
                client, set_of_kind(alias_shaped), set_member(key, alias_shaped)
            )
            if complete and not member:
                entry = False
    except RedisError as exc:
        redis_failed(exc, consequence="links are read from the database")
        return None, False
    keep_here(key, entry, generation)
    return entry, False
