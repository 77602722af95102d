"""The time-range picker of the stats pages: 24 h, 7 d, 30 d, 90 d, all time or a custom range
of days."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django import forms
from django.core.exceptions import ValidationError
from django.utils import timezone

from analytics import ranges
from analytics.models import utc_hour
from analytics.selectors import series_bucket

# The last 24 hours by the hour; the others are whole days, today among them (ranges.last_days).
PRESETS = {"24h": dt.timedelta(hours=24)}
DAY_PRESETS = {"7d": ranges.DEFAULT_DAYS, "30d": 30, "90d": 90}
ALL_TIME = "all"


@dataclass(frozen=True)
class TimeRange:
    key: str  # a PRESETS or DAY_PRESETS key, "all" or "custom"
    start: dt.datetime  # inclusive, aware
    end: dt.datetime  # exclusive, aware

    @property
    def days(self) -> float:
        return (self.end - self.start).total_seconds() / 86400


def _next_hour(now: dt.datetime) -> dt.datetime:
    # Ranges end at the end of the current UTC hour (the hourly counts' buckets), so the click
    # just made is on the chart; computed in UTC, so 24 hours are 24 real hours on a DST change.
    return utc_hour(now) + dt.timedelta(hours=1)


def _day_bounds(first: dt.date, last: dt.date) -> tuple[dt.datetime, dt.datetime]:
    """Whole days, first to last inclusive, in the current time zone, as [start, end)."""
    tz = timezone.get_current_timezone()
    start = dt.datetime.combine(first, dt.time.min, tzinfo=tz)
    return start, dt.datetime.combine(last + dt.timedelta(days=1), dt.time.min, tzinfo=tz)


class StatsRangeForm(forms.Form):
    RANGE_CHOICES = [
        ("24h", "Last 24 hours"),
        ("7d", "Last 7 days"),
        ("30d", "Last 30 days"),
        ("90d", "Last 90 days"),
        (ALL_TIME, "All time"),
    ]

    range = forms.ChoiceField(
        label="Period",
        choices=[*RANGE_CHOICES, ("custom", "Custom range")],
        required=False,
        error_messages={
            "invalid_choice": (
                "Choose 24 hours, 7 days, 30 days, 90 days, all time or a custom range."
            )
        },
    )
    start = forms.DateField(
        label="From",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        input_formats=["%Y-%m-%d"],  # what date inputs send; 03/04 is ambiguous across locales
        error_messages={"invalid": "Enter a date like 2025-03-01."},
    )
    end = forms.DateField(
        label="To (inclusive)",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        input_formats=["%Y-%m-%d"],
        error_messages={"invalid": "Enter a date like 2025-03-31."},
    )

    def __init__(self, *args, default: str = "7d", **kwargs):
        super().__init__(*args, **kwargs)
        self.default = default

    def clean(self):
        cleaned = super().clean()
        start, end = cleaned.get("start"), cleaned.get("end")
        if cleaned.get("range") == "custom" or start or end:
            if self.errors:
                return cleaned
            if not start or not end:
                raise forms.ValidationError("A custom range needs both a start and an end date.")
            if start > end:
                raise forms.ValidationError("The start date must be on or before the end date.")
            tz = timezone.get_current_timezone()
            try:
                # The start of each day first: the day after 9999-12-31 does not exist.
                ranges.check_moment(dt.datetime.combine(start, dt.time.min, tzinfo=tz))
                ranges.check_moment(dt.datetime.combine(end, dt.time.min, tzinfo=tz))
                bounds = _day_bounds(start, end)
                # The series is bucketed as the page draws it: its length is what costs.
                ranges.check_range(*bounds, bucket=series_bucket(*bounds))
            except ValidationError as error:
                raise forms.ValidationError(error.messages) from None
            cleaned["range"] = "custom"
        return cleaned

    def time_range(
        self, now: dt.datetime | None = None, *, first: dt.datetime | None = None
    ) -> TimeRange:
        """The chosen range, or the default one when the input was missing or invalid. "All
        time" starts at the hour of `first` (when the link, or the first link, was made)."""
        now = timezone.localtime(now or timezone.now())
        data = self.cleaned_data if self.is_bound and self.is_valid() else {}
        key = data.get("range") or self.default
        if key == "custom":
            return TimeRange(key, *_day_bounds(data["start"], data["end"]))
        end = _next_hour(now)
        if key == ALL_TIME:
            start = utc_hour(max(first or end, ranges.EARLIEST))
            return TimeRange(key, min(start, end - dt.timedelta(hours=1)), end)
        if key in DAY_PRESETS:
            return TimeRange(key, *ranges.last_days(DAY_PRESETS[key], end))
        return TimeRange(key, end - PRESETS[key], end)


class TagRenameForm(forms.Form):
    """The tag stats page's rename form: shape only; links.services.tags has the rules (an
    empty name is its refusal, said in its words)."""

    name = forms.CharField(
        label="New name",
        required=False,
        strip=False,
        help_text="The name of another of your tags merges the two, once you confirm.",
    )
