"""Which strategy makes codes: `SHORTURL_CODE_STRATEGY` (pool, sequence or hash)."""

from __future__ import annotations

from django.conf import settings

from links.codes.base import CodeStrategy
from links.codes.hashing import HashStrategy
from links.codes.pool import PoolStrategy
from links.codes.sequence import SequenceStrategy
from links.models import CodeType

STRATEGIES: dict[str, type[CodeStrategy]] = {
    CodeType.POOL: PoolStrategy,
    CodeType.SEQUENCE: SequenceStrategy,
    CodeType.HASH: HashStrategy,
}


def get_strategy(name: str | None = None) -> CodeStrategy:
    name = name or settings.SHORTURL_CODE_STRATEGY
    try:
        return STRATEGIES[name]()
    except KeyError:
        raise ValueError(
            f"Unknown SHORTURL_CODE_STRATEGY {name!r}; choose one of {', '.join(STRATEGIES)}"
        ) from None
