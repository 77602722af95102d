"""Short-code generation: the check character and the three strategies behind one interface.

A generated code is `SHORTURL_CODE_LENGTH` body characters plus one check character (Luhn mod
62 over `BASE62`), so the redirect can turn away ~61 in 62 random strings without touching the
cache or the database. Custom aliases carry no check character.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Max
from redis.exceptions import RedisError

from shorturl_project.redis_conn import live_redis_client, redis_failed, uses_redis

from .models import CodeType, UniqueCode, UniqueCodeStatus, UniqueCodeType, UrlLink

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_BASE62_INDEX = {ch: i for i, ch in enumerate(BASE62)}
ALIAS_RE = re.compile(r"^[A-Za-z0-9_-]{3,32}$")
RESERVED_ALIASES = frozenset(
    {
        "admin",
        "api",
        "static",
        "media",
        "dashboard",
        "accounts",
        "account",
        "login",
        "logout",
        "healthz",
        "health",
        "robots",
        "favicon",
        "docs",
        "schema",
        "links",
        "link",
        "new",
        "help",
        "about",
        "settings",
        "bulk",  # /api/v1/links/bulk/ would hide a link with this alias from the API
    }
)


class CodeGenerationError(Exception):
    """No free code could be found within the strategy's bounded attempts."""


# --- Check character ---------------------------------------------------------------------------


def check_character(body: str) -> str:
    """Luhn mod N: catches every single-character typo and most adjacent swaps."""
    n = len(BASE62)
    total = 0
    factor = 2
    for ch in reversed(body):
        addend = factor * _BASE62_INDEX[ch]
        total += addend // n + addend % n
        factor = 3 - factor
    return BASE62[(n - total % n) % n]


def with_check(body: str) -> str:
    return body + check_character(body)


def code_length() -> int:
    return settings.SHORTURL_CODE_LENGTH + 1


def is_generated_shape(code: str) -> bool:
    """Right length and characters for a generated code (says nothing about the check)."""
    return len(code) == code_length() and all(ch in _BASE62_INDEX for ch in code)


def has_valid_check(code: str) -> bool:
    return is_generated_shape(code) and check_character(code[:-1]) == code[-1]


def random_code() -> str:
    body = "".join(secrets.choice(BASE62) for _ in range(settings.SHORTURL_CODE_LENGTH))
    return with_check(body)


# --- Custom aliases ----------------------------------------------------------------------------


def validate_alias(alias: str) -> None:
    if not ALIAS_RE.match(alias):
        raise ValidationError({"alias": ["Use 3 to 32 characters: letters, digits, '-' and '_'."]})
    if alias.lower() in RESERVED_ALIASES:
        raise ValidationError({"alias": [f"“{alias}” is reserved; please choose another."]})
    if is_generated_shape(alias):
        # Generated codes own this shape, so the redirect can refuse a mistyped one on its
        # check character alone, without asking the database.
        raise ValidationError(
            {
                "alias": [
                    f"Aliases of exactly {code_length()} letters and digits are kept for "
                    "generated codes; use another length or add '-' or '_'."
                ]
            }
        )


# --- Strategies --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    code: str
    code_type: str
    seq_id: int | None = None


class CodeStrategy:
    """Yields candidate codes; the caller tries each against the unique index until one sticks."""

    name: str

    def candidates(self, long_url: str) -> Iterator[Candidate]:
        raise NotImplementedError


# --- pool --------------------------------------------------------------------------------------

POOL_SET_KEY = "shorturl:code-pool"


def pool_refill(*, batch: int | None = None, progress=None) -> int:
    """Generate `batch` fresh codes, store them as unused rows, and add them to the Redis set.

    Returns how many new codes were stored. `progress(done, total)` is called per chunk.
    """
    batch = batch or settings.SHORTURL_POOL_BATCH
    chunk = 1000
    stored = 0
    client = live_redis_client()
    while stored < batch:
        size = min(chunk, batch - stored)
        codes = {random_code() for _ in range(size)}
        existing = set(
            UniqueCode.objects.filter(code__in=codes).values_list("code", flat=True)
        ) | set(UrlLink.objects.filter(code__in=codes).values_list("code", flat=True))
        fresh = sorted(codes - existing)
        UniqueCode.objects.bulk_create(
            [UniqueCode(code=c, type=UniqueCodeType.RANDOM) for c in fresh],
            ignore_conflicts=True,
        )
        if client is not None and fresh:
            try:
                client.sadd(POOL_SET_KEY, *fresh)
            except RedisError as exc:
                redis_failed(exc, consequence="new pool codes are served from the database")
        stored += len(fresh)
        if progress:
            progress(stored, batch)
    return stored


def pool_status() -> dict[str, int | None]:
    counts = {s: 0 for s in UniqueCodeStatus.values}
    for row in UniqueCode.objects.values("status").annotate(n=Count("id")):
        counts[row["status"]] = row["n"]
    redis_size = None
    client = live_redis_client()
    if client is not None:
        try:
            redis_size = client.scard(POOL_SET_KEY)
        except RedisError:
            redis_size = None  # shown as unknown on the status pages
    return {**counts, "redis": redis_size}


def pool_needs_refill() -> bool:
    """Below the low-water mark in the set Redis serves from (or the DB when there is no Redis)."""
    client = live_redis_client()
    if client is not None:
        try:
            return client.scard(POOL_SET_KEY) < settings.SHORTURL_POOL_MIN
        except RedisError as exc:
            redis_failed(exc, consequence="the code pool is judged by its database rows")
    unused = UniqueCode.objects.filter(status=UniqueCodeStatus.UNUSED)
    return unused[: settings.SHORTURL_POOL_MIN].count() < settings.SHORTURL_POOL_MIN


def pool_load_redis_from_db() -> int:
    """After a Redis restart, hand the unused rows back to the set (duplicates are harmless)."""
    client = live_redis_client()
    if client is None:
        return 0
    loaded = 0
    codes = UniqueCode.objects.filter(status=UniqueCodeStatus.UNUSED).values_list("code", flat=True)
    batch: list[str] = []
    for code in codes.iterator(chunk_size=5000):
        batch.append(code)
        if len(batch) == 5000:
            client.sadd(POOL_SET_KEY, *batch)
            loaded += len(batch)
            batch = []
    if batch:
        client.sadd(POOL_SET_KEY, *batch)
        loaded += len(batch)
    return loaded


def pool_refill_if_low() -> int:
    """Top the pool up when it is under its low-water mark (and the pool strategy is in use)."""
    if get_strategy().name != CodeType.POOL or not pool_needs_refill():
        return 0
    return pool_refill()


def _request_refill() -> None:
    if not uses_redis():
        return  # embedded mode: the node's background runner refills, off the request path
    from .tasks import refill_code_pool_task

    transaction.on_commit(refill_code_pool_task.delay)


def _pop_from_redis(count: int) -> list[str]:
    """SPOP up to `count` codes (and ask for a refill when the set runs low); [] without Redis."""
    client = live_redis_client()
    if client is None:
        return []
    try:
        pipe = client.pipeline(transaction=False)
        pipe.spop(POOL_SET_KEY, count)
        pipe.scard(POOL_SET_KEY)
        popped, left = pipe.execute()
    except RedisError as exc:
        redis_failed(exc, consequence="pool codes are claimed from the database")
        return []
    if left < settings.SHORTURL_POOL_MIN:
        _request_refill()
    return [c.decode() if isinstance(c, bytes) else c for c in popped or []]


def _mark_used(rows: dict[int, str]) -> list[str]:
    UniqueCode.objects.filter(id__in=rows).update(status=UniqueCodeStatus.USED)
    return list(rows.values())


def pool_claim(count: int) -> list[str]:
    """Up to `count` unused pool codes, each handed out once, in a few round trips.

    Redis SPOP first; the set may hold codes the database path already handed out, so only
    rows still unused count. Then unused rows straight from the database, skipping rows other
    transactions hold (SKIP LOCKED; SQLite has a single writer and ignores the clause). An
    empty pool is refilled inline once. The UrlLink unique index stays the ground truth.
    """
    claimed: list[str] = []
    with transaction.atomic():
        popped = _pop_from_redis(count)
        if popped:
            claimed += _mark_used(
                dict(
                    UniqueCode.objects.select_for_update()
                    .filter(code__in=popped, status=UniqueCodeStatus.UNUSED)
                    .values_list("id", "code")
                )
            )
        for attempt in range(2):
            missing = count - len(claimed)
            if missing <= 0:
                break
            if attempt:
                # Empty pool (first run, or beat not running): refill inline, then claim again.
                pool_refill(batch=max(missing, settings.SHORTURL_POOL_MIN))
            claimed += _mark_used(
                dict(
                    UniqueCode.objects.select_for_update(skip_locked=True)
                    .filter(status=UniqueCodeStatus.UNUSED)
                    .order_by("id")
                    .values_list("id", "code")[:missing]
                )
            )
    return claimed


class PoolStrategy(CodeStrategy):
    name = CodeType.POOL

    def candidates(self, long_url: str) -> Iterator[Candidate]:
        for _ in range(50):
            claimed = pool_claim(1)
            if not claimed:
                break
            yield Candidate(code=claimed[0], code_type=CodeType.POOL)


# --- sequence ----------------------------------------------------------------------------------

SEQUENCE_KEY = "shorturl:code-seq"
_FEISTEL_ROUNDS = 4
_HALF_BITS = 18  # a 36-bit Feistel domain covers 62**6 ids; cycle-walking keeps results in range


def _round_value(key: bytes, round_index: int, value: int, bits: int) -> int:
    digest = hashlib.blake2b(
        value.to_bytes(8, "big") + bytes([round_index]), key=key[:64], digest_size=8
    ).digest()
    return int.from_bytes(digest, "big") & ((1 << bits) - 1)


class KeyedPermutation:
    """A keyed bijection on [0, n): a balanced Feistel network with cycle-walking."""

    def __init__(self, key: str, n: int):
        self.key = hashlib.sha256(key.encode()).digest()
        self.n = n
        half = 1
        while (1 << (2 * half)) < n:
            half += 1
        self.half = half
        self.mask = (1 << half) - 1

    def _forward_once(self, x: int) -> int:
        left, right = x >> self.half, x & self.mask
        for r in range(_FEISTEL_ROUNDS):
            left, right = right, left ^ _round_value(self.key, r, right, self.half)
        return (left << self.half) | right

    def _backward_once(self, y: int) -> int:
        left, right = y >> self.half, y & self.mask
        for r in reversed(range(_FEISTEL_ROUNDS)):
            left, right = right ^ _round_value(self.key, r, left, self.half), left
        return (left << self.half) | right

    def forward(self, x: int) -> int:
        if not 0 <= x < self.n:
            raise ValueError("value outside the permutation's domain")
        y = self._forward_once(x)
        while y >= self.n:
            y = self._forward_once(y)
        return y

    def backward(self, y: int) -> int:
        if not 0 <= y < self.n:
            raise ValueError("value outside the permutation's domain")
        x = self._backward_once(y)
        while x >= self.n:
            x = self._backward_once(x)
        return x


def _sequence_alphabet() -> str:
    alphabet = settings.SHORTURL_ALPHABET
    if len(alphabet) != 62 or set(alphabet) != set(BASE62):
        raise ValueError("SHORTURL_ALPHABET must be a permutation of the 62 letters and digits")
    return alphabet


def sequence_encode(seq_id: int) -> str:
    """id → code: permute the id under the secret key, spell it in the secret alphabet."""
    length = settings.SHORTURL_CODE_LENGTH
    space = 62**length
    permuted = KeyedPermutation(settings.SHORTURL_SEQUENCE_KEY, space).forward(seq_id % space)
    alphabet = _sequence_alphabet()
    chars = []
    for _ in range(length):
        permuted, digit = divmod(permuted, 62)
        chars.append(alphabet[digit])
    return with_check("".join(reversed(chars)))


def sequence_decode(code: str) -> int:
    if not has_valid_check(code):
        raise ValueError("not a generated code")
    alphabet = _sequence_alphabet()
    value = 0
    for ch in code[:-1]:
        value = value * 62 + alphabet.index(ch)
    space = 62**settings.SHORTURL_CODE_LENGTH
    return KeyedPermutation(settings.SHORTURL_SEQUENCE_KEY, space).backward(value)


class _SequenceBlock:
    """Ids handed out by this process: one Redis INCRBY serves a whole block."""

    def __init__(self):
        self.lock = threading.Lock()
        self.next_id = 0
        self.end_id = -1

    def take(self) -> int:
        with self.lock:
            if self.next_id > self.end_id:
                self.next_id, self.end_id = _reserve_block(settings.SHORTURL_SEQUENCE_BLOCK)
            value = self.next_id
            self.next_id += 1
            return value

    def reset(self) -> None:
        with self.lock:
            self.next_id, self.end_id = 0, -1


_sequence_block = _SequenceBlock()


def _db_max_seq_id() -> int:
    return UrlLink.objects.aggregate(m=Max("seq_id"))["m"] or 0


_local_counter = {"value": None}
_local_lock = threading.Lock()


def _reserve_block(size: int) -> tuple[int, int]:
    client = live_redis_client()
    if client is not None:
        try:
            if not client.exists(SEQUENCE_KEY):
                # Warm from the DB so a flushed Redis never re-issues an id.
                client.set(SEQUENCE_KEY, _db_max_seq_id(), nx=True)
            end = client.incrby(SEQUENCE_KEY, size)
            return end - size + 1, end
        except RedisError as exc:
            redis_failed(exc, consequence="sequence ids come from a per-process counter")
    with _local_lock:
        # Embedded mode: one process; the seq_id unique index catches anything else.
        if _local_counter["value"] is None:
            _local_counter["value"] = _db_max_seq_id()
        start = _local_counter["value"] + 1
        _local_counter["value"] += size
        return start, start + size - 1


def sequence_resync() -> None:
    """Forget this process's block and counter after a collision (another process got ahead)."""
    _sequence_block.reset()
    with _local_lock:
        _local_counter["value"] = None


class SequenceStrategy(CodeStrategy):
    name = CodeType.SEQUENCE

    def candidates(self, long_url: str) -> Iterator[Candidate]:
        for attempt in range(20):
            if attempt:
                sequence_resync()
            seq_id = _sequence_block.take()
            yield Candidate(
                code=sequence_encode(seq_id), code_type=CodeType.SEQUENCE, seq_id=seq_id
            )


# --- hash --------------------------------------------------------------------------------------


def hash_candidates(long_url: str, salt: str) -> list[str]:
    """MD5(url + salt) → four 32-bit segments → four codes, characters chosen with `% 62`.

    The classic `& 0x3D` mask can only produce 32 of the 62 characters; `% 62` over a
    value rotated by five bits per character keeps every position on the whole alphabet.
    """
    digest = hashlib.md5((long_url + salt).encode(), usedforsecurity=False).hexdigest()
    codes = []
    for i in range(4):
        value = int(digest[i * 8 : i * 8 + 8], 16)
        chars = []
        for _ in range(settings.SHORTURL_CODE_LENGTH):
            chars.append(BASE62[value % 62])
            value = ((value >> 5) | (value << 27)) & 0xFFFFFFFF
        codes.append(with_check("".join(chars)))
    return codes


class HashStrategy(CodeStrategy):
    name = CodeType.HASH

    def candidates(self, long_url: str) -> Iterator[Candidate]:
        for attempt in range(settings.SHORTURL_HASH_MAX_RETRIES):
            salt = settings.SHORTURL_HASH_SALT + ("" if attempt == 0 else f":{attempt}")
            for code in hash_candidates(long_url, salt):
                yield Candidate(code=code, code_type=CodeType.HASH)


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
