"""The `hash` strategy: MD5 of the long URL (plus a salt), four candidates per salt."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from django.conf import settings

from ..models import CodeType
from .base import Candidate, CodeStrategy
from .shape import BASE62, with_check


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
