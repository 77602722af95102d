"""The `sequence` strategy: ids from a counter handed out in blocks, spelled in a secret alphabet
after a keyed permutation, so consecutive ids do not give neighbouring codes."""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Iterator

from django.conf import settings
from django.db.models import Max
from redis.exceptions import RedisError

from core.redis_conn import live_redis_client, redis_failed
from links.codes.base import Candidate, CodeStrategy
from links.codes.shape import BASE62, has_valid_check, with_check
from links.models import CodeType, UrlLink

SEQUENCE_KEY = "shorturl:code-seq"
_FEISTEL_ROUNDS = 4


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


@functools.lru_cache(maxsize=8)
def _checked_alphabet(alphabet: str) -> str:
    if len(alphabet) != 62 or set(alphabet) != set(BASE62):
        raise ValueError("SHORTURL_ALPHABET must be a permutation of the 62 letters and digits")
    return alphabet


def _sequence_alphabet() -> str:
    return _checked_alphabet(settings.SHORTURL_ALPHABET)


@functools.lru_cache(maxsize=8)
def _permutation(key: str, n: int) -> KeyedPermutation:
    """The permutation for these settings, built once (it hashes the key)."""
    return KeyedPermutation(key, n)


def sequence_encode(seq_id: int) -> str:
    """id → code: permute the id under the secret key, spell it in the secret alphabet."""
    length = settings.SHORTURL_CODE_LENGTH
    space = 62**length
    permuted = _permutation(settings.SHORTURL_SEQUENCE_KEY, space).forward(seq_id % space)
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
    return _permutation(settings.SHORTURL_SEQUENCE_KEY, space).backward(value)


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

    def reserve(self, count: int) -> None:
        """Make sure the next `count` takes need no round trip (unless other threads take ids
        meanwhile): one INCRBY for a bulk call. What is left of a block too small is skipped,
        as ids are after a restart."""
        with self.lock:
            if self.end_id - self.next_id + 1 < count:
                size = max(count, settings.SHORTURL_SEQUENCE_BLOCK)
                self.next_id, self.end_id = _reserve_block(size)

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

    def expect(self, count: int) -> None:
        _sequence_block.reserve(count)

    def candidates(self, long_url: str) -> Iterator[Candidate]:
        for attempt in range(20):
            if attempt:
                sequence_resync()
            seq_id = _sequence_block.take()
            yield Candidate(
                code=sequence_encode(seq_id), code_type=CodeType.SEQUENCE, seq_id=seq_id
            )
