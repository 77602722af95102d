"""What a generated code looks like: a body plus one check character. Pure: no I/O.

A generated code is `SHORTURL_CODE_LENGTH` body characters plus one check character (Luhn mod
62 over `BASE62`), so the redirect can turn away ~61 in 62 random strings without touching the
cache or the database. Custom aliases carry no check character.
"""

from __future__ import annotations

import functools
import secrets

from django.conf import settings

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_BASE62_INDEX = {ch: i for i, ch in enumerate(BASE62)}


@functools.lru_cache(maxsize=1 << 16)  # pure, and computed on every redirect of a code
def check_character(body: str) -> str:
    """Luhn mod N: catches every single-character typo and every swap of two neighbouring
    characters except 0↔z (Luhn's one blind spot, as 09↔90 in the decimal original)."""
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
    # BASE62 is exactly the ASCII letters and digits.
    return len(code) == code_length() and code.isascii() and code.isalnum()


def has_valid_check(code: str) -> bool:
    return is_generated_shape(code) and check_character(code[:-1]) == code[-1]


def random_code() -> str:
    body = "".join(secrets.choice(BASE62) for _ in range(settings.SHORTURL_CODE_LENGTH))
    return with_check(body)
