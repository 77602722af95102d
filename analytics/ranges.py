"""The stats range rules, one definition for the stats pages' form and the stats API.

A range is [start, end): start from 2000 on, end at most a day ahead of now, start before end;
a series of hours covers at most 366 days (longer ranges are shown by day or week). Without a
choice, the last 7 days.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.core.exceptions import ValidationError
from django.utils import timezone

EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
# A day of slack: "today" in the viewer's zone may end up to 14 hours after UTC's.
FUTURE_SLACK = timedelta(days=1)
MAX_HOURLY_RANGE = timedelta(days=366)
DEFAULT_RANGE = timedelta(days=7)

BEFORE_EARLIEST = "Dates before 2000 hold no clicks."
IN_THE_FUTURE = "The end cannot be in the future."
START_AFTER_END = "The start must be before the end."
TOO_MANY_HOURS = (
    "Choose at most 366 days of hours at a time; for longer ranges ask for bucket=day, week or "
    "auto."
)


def check_moment(moment: datetime, *, now: datetime | None = None) -> datetime:
    """`moment` if it may bound a range, else ValidationError (keeps later arithmetic safe)."""
    if moment < EARLIEST:
        raise ValidationError(BEFORE_EARLIEST)
    if moment > (now or timezone.now()) + FUTURE_SLACK:
        raise ValidationError(IN_THE_FUTURE)
    return moment


def check_range(start: datetime, end: datetime, *, hourly: bool = False) -> None:
    """ValidationError({"start": [reason]}) unless [start, end) is a range stats may show, as a
    series of hours when `hourly`."""
    if start >= end:
        raise ValidationError({"start": [START_AFTER_END]})
    if hourly and end - start > MAX_HOURLY_RANGE:
        raise ValidationError({"start": [TOO_MANY_HOURS]})
