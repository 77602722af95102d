"""What a code strategy is: a source of candidate codes, tried in turn against the unique index."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from core.errors import Unavailable


class CodeGenerationError(Unavailable):
    """No free code could be found within the strategy's bounded attempts."""


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

    def expect(self, count: int) -> None:
        """About to take the first candidates of `count` URLs: get ready in one go if that saves
        round trips (the sequence strategy reserves its ids)."""
