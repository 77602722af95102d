"""The names the link cache keys everything by: a link's key (its code, and its domain when that
is an extra one), and the Redis keys of its entries, versions, sets and change stream, so that
what the cache keeps in Redis can be read off one page.
"""

from __future__ import annotations

from links.models import DEFAULT_DOMAIN_ID, UrlLink

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
# complete and trusted asks it no more (see store.answer_here): it answers processes that do not
# trust their memory, or have no filter yet.
CODE_SET_KEY = "shorturl:{codes}"
CODE_SET_LOCK = "shorturl:{codes}:loading"
# Bumped whenever the set is marked incomplete: a load whose database read began before that
# may not mark the set complete (it could lack the very code that made it incomplete).
CODE_SET_EPOCH = "shorturl:{codes}:epoch"

# The generation-table key of the alias set (no code contains "*").
_ALIASES_GENERATION = "*aliases*"
# Services mode: every change to a cached code, for the other nodes (see apply_remote_changes).
# An epoch value set once per Redis data set tells a node that Redis lost the stream (restart
# without persistence), after which nothing it cached can be trusted.
CHANGES_KEY = "shorturl:changes"
CHANGES_EPOCH_KEY = "shorturl:changes:epoch"
