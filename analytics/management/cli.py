"""What the analytics commands share: reading a --since date and drawing a progress bar."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

_BAR = 30


def parse_since(value: str) -> dt.datetime:
    """YYYY-MM-DD (midnight in TIME_ZONE) or an ISO datetime, as an aware datetime."""
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError:
        raise CommandError(f"--since {value!r} is not a date like 2024-05-01") from None
    return timezone.make_aware(moment) if timezone.is_naive(moment) else moment


def progress_bar(command: BaseCommand, unit: str) -> Callable[[int, int], None]:
    """A callback drawing `[####......] <unit> done/total` on one line of the command's output
    (end it with a plain newline)."""

    def show(done: int, total: int) -> None:
        filled = round(_BAR * done / total) if total else _BAR
        command.stdout.write(
            f"\r[{'#' * filled}{'.' * (_BAR - filled)}] {unit} {done:,}/{total:,}", ending=""
        )
        command.stdout.flush()

    return show
