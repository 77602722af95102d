"""The `hash` strategy: MD5 of the long URL (plus a salt), four candidates per salt."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from django.conf import settings

from links.codes.base import Candidate, CodeStrategy
from links.codes.shape import BASE62, with_check
from links.models import CodeType


def hash_candidates(long_url: str, salt: str) -> list[str]:
    """MD5(url + salt) → four 32-bit segments → four codes, characters chosen with `% 62`.

    The classic `& 0x3D` mask can only produce 32 of the 62 characters; `% 62` over a
    value rotated by five bits per character keeps every position on the whole alphabet.
    """
    return list(_hash_codes(long_url, salt, settings.SHORTURL_CODE_LENGTH))


def _hash_codes(long_url: str, salt: str, length: int) -> Iterator[str]:
    """hash_candidates' codes, each worked out only when asked for (the first usually sticks)."""
    digest = hashlib.md5((long_url + salt).encode(), usedforsecurity=False).hexdigest()
    for i in range(4):
        value = int(digest[i * 8 : i * 8 + 8], 16)
        chars = []
        for _ in range(length):
            chars.append(BASE62[value % 62])
            value = ((value >> 5) | (value << 27)) & 0xFFFFFFFF
        yield with_check("".join(chars))


class HashStrategy(CodeStrategy):
    name = CodeType.HASH

    def candidates(self, long_url: str) -> Iterator[Candidate]:
        retries, base_salt = settings.SHORTURL_HASH_MAX_RETRIES, settings.SHORTURL_HASH_SALT
        length = settings.SHORTURL_CODE_LENGTH
        for attempt in range(retries):
            salt = base_salt + ("" if attempt == 0 else f":{attempt}")
            for code in _hash_codes(long_url, salt, length):
                yield Candidate(code=code, code_type=CodeType.HASH)
