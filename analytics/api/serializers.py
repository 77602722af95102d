"""Shapes of GET /api/v1/links/{code}/stats/."""

from __future__ import annotations

import re
from datetime import datetime

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils import timezone
from rest_framework import serializers

from analytics import ranges, selectors
from analytics.bots import BotKind
from analytics.models import Channel
from links.models import FALLBACK_STATES

DATETIME_MESSAGE = "Enter an ISO 8601 date and time, e.g. 2026-03-01T00:00:00Z."
# An unencoded "+01:00" in a query string arrives as " 01:00".
_SPACE_OFFSET = re.compile(r" (\d\d:?\d\d)$")


class _QueryDateTimeField(serializers.DateTimeField):
    def to_internal_value(self, value):
        if isinstance(value, str):
            value = _SPACE_OFFSET.sub(r"+\1", value.strip())
        return super().to_internal_value(value)


class _LimitField(serializers.IntegerField):
    """1–100, or "all" (None: every entry)."""

    default_error_messages = {"invalid": "Enter a whole number from 1 to 100, or all."}

    def to_internal_value(self, data):
        if isinstance(data, str) and data.strip().lower() == "all":
            return None
        return super().to_internal_value(data)

    def run_validators(self, value):
        if value is not None:  # "all" has no bounds to check
            super().run_validators(value)


class StatsQuerySerializer(serializers.Serializer):
    """`start`/`end` (ISO 8601; the last 7 days by default) and the breakdowns' length; the
    range rules are analytics.ranges', the same as the stats pages'."""

    start = _QueryDateTimeField(
        required=False,
        help_text="First hour to count (rounded down to the hour); default: the local midnight "
        "starting the last 7 days (today, so far, and the 6 days before it).",
        error_messages={"invalid": DATETIME_MESSAGE},
    )
    end = _QueryDateTimeField(
        required=False,
        help_text="End of the range (exclusive); default now.",
        error_messages={"invalid": DATETIME_MESSAGE},
    )
    limit = _LimitField(
        required=False,
        default=10,
        min_value=1,
        max_value=100,
        help_text="How many entries each breakdown lists (top first), or `all`; the rest are "
        "summed in `other`.",
    )

    bucket = serializers.ChoiceField(
        choices=[*selectors.BUCKETS, "auto"],
        required=False,
        default="hour",
        help_text="What each `series` entry covers: an hour (at most 366 days of them), a day or "
        "a week (Monday first) in the answer's time zone, or `auto`: by hour up to 48 hours, by "
        "day up to 180 days, by week beyond (the stats page's choice). A series lists at most "
        "STATS_MAX_BUCKETS entries (10,000 by default); a longer one is a 400 naming the limit.",
    )

    def _bound(self, value: datetime) -> datetime:
        try:
            return ranges.check_moment(value)
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.messages) from None

    def validate_start(self, value: datetime) -> datetime:
        return self._bound(value)

    def validate_end(self, value: datetime) -> datetime:
        return self._bound(value)

    def validate(self, attrs: dict) -> dict:
        end = attrs.get("end") or timezone.now()
        start = attrs.get("start") or ranges.last_days(ranges.DEFAULT_DAYS, end)[0]
        bucket = attrs.get("bucket", "hour")
        if bucket == "auto":
            bucket = selectors.series_bucket(start, end)
        try:
            ranges.check_range(start, end, bucket=bucket)
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.message_dict) from None
        return {**attrs, "start": start, "end": end, "bucket": bucket}


class BreakdownEntrySerializer(serializers.Serializer):
    name = serializers.CharField()
    clicks = serializers.IntegerField()
    share = serializers.FloatField(
        required=False,
        help_text="Percent of the breakdown's clicks in the whole range (people's; bots' for "
        "`bots` and `bot_kinds`), not of the entries listed.",
    )


class OtherSerializer(serializers.Serializer):
    clicks = serializers.IntegerField(help_text="Clicks of the entries past `limit`.")
    values = serializers.IntegerField(help_text="How many entries that is.")
    share = serializers.FloatField(help_text="Their percent of the breakdown's clicks.")


class CountryEntrySerializer(BreakdownEntrySerializer):
    code = serializers.CharField(required=False, help_text="ISO 3166-1 alpha-2, when known.")


class BotKindEntrySerializer(BreakdownEntrySerializer):
    kind = serializers.ChoiceField(
        choices=BotKind.choices, required=False, help_text="The kind's stable value."
    )


class ChannelEntrySerializer(BreakdownEntrySerializer):
    channel = serializers.ChoiceField(
        choices=Channel.choices,
        required=False,
        help_text="The channel's stable value: `link` (the short URL itself) or `qr` (its QR "
        "code, which opens the short URL with `?qr=1`).",
    )


class DestinationEntrySerializer(BreakdownEntrySerializer):
    url = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text="Where a rule or variant sent people (as the Location header had it, cut to "
        '255 characters); "" for the long URL, whose entry is named "Long URL".',
    )


class HourlyPointSerializer(serializers.Serializer):
    hour = serializers.DateTimeField(help_text="Start of the hour (of the day or week: `bucket`).")
    clicks = serializers.IntegerField(help_text="Clicks by people.")
    unique_visitors = serializers.IntegerField(
        help_text="Distinct people in the entry, counted exactly (never a sum of hours; a "
        "person who came back several times in a day is one visitor of that day)."
    )
    bot_clicks = serializers.IntegerField(required=False, help_text="Bots and link previews.")


class FallbackEntrySerializer(BreakdownEntrySerializer):
    state = serializers.ChoiceField(
        choices=[status.value for status in FALLBACK_STATES],
        help_text="The link's state when these people were sent to its fallback.",
    )


class RevenueSerializer(serializers.Serializer):
    currency = serializers.CharField(help_text="ISO 4217.")
    amount = serializers.IntegerField(help_text="The sales' sum in the currency's minor units.")
    sales = serializers.IntegerField()


class _ConversionCountsSerializer(serializers.Serializer):
    leads = serializers.IntegerField()
    sales = serializers.IntegerField()
    revenue = serializers.IntegerField(
        allow_null=True, help_text="Minor units; null when the range has several currencies."
    )


class ConversionDaySerializer(_ConversionCountsSerializer):
    day = serializers.DateField(help_text="A day in the answer's time zone.")
    clicks = serializers.IntegerField(help_text="People's clicks that day.")
    lead_rate = serializers.FloatField(help_text="Leads per 100 clicks.")
    sale_rate = serializers.FloatField(help_text="Sales per 100 leads.")


class ConversionEntrySerializer(_ConversionCountsSerializer):
    name = serializers.CharField()
    code = serializers.CharField(required=False, help_text="Countries: ISO 3166-1 alpha-2.")
    clicks = serializers.IntegerField(
        allow_null=True,
        help_text="The value's clicks in the range; null when the clicks' breakdown, cut at "
        "`limit`, does not list it.",
    )


class ConversionDetailsSerializer(serializers.Serializer):
    days = ConversionDaySerializer(many=True, help_text="Days with a conversion, oldest first.")
    countries = ConversionEntrySerializer(many=True, help_text="By the click's country.")
    devices = ConversionEntrySerializer(many=True, help_text="By the click's device type.")
    referrers = ConversionEntrySerializer(
        many=True, help_text="By the click's referring site; Direct when none was sent."
    )


def _breakdown(help_text: str, entry=BreakdownEntrySerializer, **kwargs):
    return entry(many=True, help_text=help_text + " Sorted by clicks, most first.", **kwargs)


class LinkStatsSerializer(serializers.Serializer):
    code = serializers.CharField()
    start = serializers.DateTimeField(required=False, help_text="Start of the first hour counted.")
    end = serializers.DateTimeField(required=False)
    timezone = serializers.CharField(required=False, help_text="Time zone of the hours shown.")
    total_clicks = serializers.IntegerField(help_text="Clicks by people in the range.")
    unique_visitors = serializers.IntegerField(help_text="Distinct visitors in the range.")
    uniques_exact_within = serializers.CharField(
        required=False,  # a link's stats (a tag's links may differ)
        help_text="Over what span `unique_visitors` is exact: `all time` (privacy mode `full`), "
        "else the visitor-id window of `truncated` and `none` (`day` by default): a person who "
        "comes back in a later window is counted again.",
    )
    bot_clicks = serializers.IntegerField(
        required=False, help_text="Clicks by bots and link-preview fetchers (not in the totals)."
    )
    # Conversions (issue #29): POST /api/v1/track/lead and /track/sale of the range.
    leads = serializers.IntegerField(help_text="Leads reported for the clicks, in the range.")
    sales = serializers.IntegerField(help_text="Sales reported, each invoice id once.")
    revenue = serializers.IntegerField(
        allow_null=True,
        help_text="The sales' sum in minor units of `currency`; null when they are in several "
        "currencies (see `revenue_by_currency`), 0 with no sale.",
    )
    currency = serializers.CharField(
        allow_null=True, help_text="The currency of `revenue`; null with none or several."
    )
    revenue_by_currency = RevenueSerializer(many=True, help_text="Each currency's sales.")
    lead_rate = serializers.FloatField(help_text="Leads per 100 clicks (percent, 1 decimal).")
    sale_rate = serializers.FloatField(help_text="Sales per 100 leads (percent, 1 decimal).")
    conversions = ConversionDetailsSerializer(
        help_text="Leads, sales and revenue by day and by the clicks' country, device, referrer."
    )
    bucket = serializers.ChoiceField(
        choices=selectors.BUCKETS, required=False, help_text="What each `series` entry covers."
    )
    series = HourlyPointSerializer(
        many=True, help_text="One entry per hour (or day, or week: `bucket`), zeros included."
    )
    countries = _breakdown("People's clicks by country.", CountryEntrySerializer)
    provinces = _breakdown("By province or state.")
    cities = _breakdown("By city.")
    isps = _breakdown("By network provider, when the ASN database is set up.", required=False)
    browsers = _breakdown("By browser.")
    os = _breakdown("By operating system.")
    devices = _breakdown("By device type (PC, Mobile, Tablet, Other).")
    referrers = _breakdown("By referring site; Direct when none was sent.")
    channels = _breakdown(
        "How people came: through the short link or by scanning its QR code.",
        ChannelEntrySerializer,
    )
    destinations = _breakdown(
        "Where people went: the long URL, or a rule's or variant's url.",
        DestinationEntrySerializer,
        required=False,
    )
    fallbacks = _breakdown(
        "People a stopped link sent to its fallback (expired_url, or the short domain's) instead "
        "of the 410 page, by the link's state then: `state` expired, revoked or limit_reached.",
        FallbackEntrySerializer,
        required=False,
    )
    sent_to_fallback = serializers.IntegerField(
        required=False,
        help_text="How many people a stopped link sent to its fallback in the range (counted in "
        "total_clicks too; never toward max_visits).",
    )
    bots = _breakdown("Bot clicks by bot name.", required=False)
    bot_kinds = _breakdown(
        "Bot clicks by kind: search engine, social preview, monitoring, AI crawler, HTTP library, "
        "automation, other.",
        BotKindEntrySerializer,
        required=False,
    )
    other = serializers.DictField(
        child=OtherSerializer(),
        required=False,
        help_text="Per breakdown name, what `limit` left out, summed (zeros when nothing was).",
    )


class TagStatsSerializer(LinkStatsSerializer):
    """A tag's stats: a link's shape, summed over the caller's links carrying the tag."""

    code = None
    tag = serializers.CharField(help_text="The tag's name, as first typed.")
    links = serializers.IntegerField(help_text="How many of your links carry the tag.")


class LiveQuerySerializer(StatsQuerySerializer):
    """`start`/`end` of a live answer: a stats call's range, where `end` may stay open (up to
    now, however long the caller keeps asking)."""

    end = _QueryDateTimeField(
        required=False,
        help_text="End of the range (exclusive); default: open, up to now however long you keep "
        "asking.",
        error_messages={"invalid": DATETIME_MESSAGE},
    )
    limit = None
    bucket = None

    def validate(self, attrs: dict) -> dict:
        end = attrs.get("end")
        start = attrs.get("start") or ranges.last_days(ranges.DEFAULT_DAYS, timezone.now())[0]
        if end is not None and start >= end:
            raise serializers.ValidationError({"start": [ranges.START_AFTER_END]})
        return {"start": start, "end": end}


class LiveStatsSerializer(serializers.Serializer):
    """GET /api/v1/links/{code}/stats/live: the totals of a range while clicks come in."""

    code = serializers.CharField()
    start = serializers.DateTimeField(help_text="Start of the first hour counted.")
    end = serializers.DateTimeField(
        allow_null=True, help_text="End of the range (exclusive); null: open, up to now."
    )
    clicks = serializers.IntegerField(
        help_text="Clicks by people in the range, the stats' total_clicks, counting a click "
        "about a second after it was made (before the hourly roll-up has counted it)."
    )
    bot_clicks = serializers.IntegerField(help_text="Bots and link previews (not in `clicks`).")
    as_of = serializers.DateTimeField(help_text="When these figures were read.")


class WorkspaceStatsSerializer(LinkStatsSerializer):
    """A workspace's stats: a link's shape, summed over every link of the workspace."""

    code = None
    workspace = serializers.CharField(help_text="The workspace's slug.")
