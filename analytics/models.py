from datetime import UTC, datetime

from django.db import models

from analytics.bots import BotKind
from core import channels
from links.models import UrlLink


class DeviceType(models.TextChoices):
    PC = "PC", "PC"
    MOBILE = "Mobile", "Mobile"
    TABLET = "Tablet", "Tablet"
    BOT = "Bot", "Bot"
    OTHER = "Other", "Other"


class Channel(models.TextChoices):
    """How the visitor came (core.channels): the short link, or a scan of its QR code."""

    LINK = channels.LINK, channels.LABELS[channels.LINK]
    QR = channels.QR, channels.LABELS[channels.QR]


class VisitRecord(models.Model):
    """One click on a short link, enriched with where it came from and what made it."""

    link = models.ForeignKey(UrlLink, on_delete=models.CASCADE, related_name="visits")
    code = models.CharField(max_length=32)
    # Chosen by the redirect that saw the click; makes a re-delivered batch harmless.
    event_id = models.CharField(max_length=32, unique=True)
    # Not indexed on its own: a random SHA-1 per visitor made every insert a random B-tree write,
    # and no read needs it first (unique visitors are counted within a link's time range, from
    # the covering index below; the admin's search ORs unindexed columns, a table scan either
    # way). docs/performance.md.
    client_id = models.CharField(max_length=40)
    client_ip = models.CharField(max_length=45, blank=True, default="")
    visit_time = models.DateTimeField()
    user_agent = models.CharField(max_length=512, blank=True, default="")
    referrer = models.CharField(max_length=1024, blank=True, default="")
    country = models.CharField(max_length=64, blank=True, default="")
    country_code = models.CharField(max_length=2, blank=True, default="")
    province = models.CharField(max_length=64, blank=True, default="")
    city = models.CharField(max_length=64, blank=True, default="")
    isp = models.CharField(max_length=128, blank=True, default="")
    browser_type = models.CharField(max_length=64, blank=True, default="")
    browser_version = models.CharField(max_length=32, blank=True, default="")
    os_type = models.CharField(max_length=64, blank=True, default="")
    os_version = models.CharField(max_length=32, blank=True, default="")
    device_type = models.CharField(
        max_length=8, choices=DeviceType.choices, default=DeviceType.OTHER
    )
    is_bot = models.BooleanField(default=False)
    # Which bot, for bots only (analytics.bots): "Googlebot", "Slackbot", "curl", …
    bot_name = models.CharField(max_length=64, blank=True, default="")
    bot_kind = models.CharField(max_length=16, choices=BotKind.choices, blank=True, default="")
    # Through the QR code's own URL (`?qr=1`) or the short link. The database default too: code
    # that predates the column (a process during a rolling upgrade) can still insert visits.
    channel = models.CharField(
        "came through",
        max_length=8,
        choices=Channel.choices,
        default=Channel.LINK,
        db_default=Channel.LINK,
    )
    # Where a link's rule or variant sent the visitor (the Location, without the visitor's
    # query string); "" for the long URL, which every visit stored before rules existed got.
    destination = models.CharField(max_length=2048, blank=True, default="", db_default="")
    # The link's state when the visitor came, for a visit sent to its fallback (the link's
    # expired_url, else its domain's expired_redirect) instead of the 410 page: "expired",
    # "revoked" or "limit_reached" (links.models.LinkStatus). "" for a visit the link served
    # itself. Such a visit is the link's, but never one of its capped visits.
    link_state = models.CharField(max_length=16, blank=True, default="", db_default="")

    class Meta:
        indexes = [
            # A link's visits in time order (latest visits, the CSV export's keyset pages: id
            # breaks ties), and covering for a range's distinct people: COUNT(DISTINCT
            # client_id) of the people (is_bot) in a day or week reads this index alone.
            models.Index(
                fields=["link", "visit_time", "id", "is_bot", "client_id"],
                name="visit_link_time_people",
            ),
            models.Index(fields=["visit_time"], name="visit_time"),
        ]

    def __str__(self) -> str:
        return f"{self.code} @ {self.visit_time:%Y-%m-%d %H:%M:%S}"

    @property
    def place(self) -> str:
        """ "City, Country" as far as known, each name once: private and loopback addresses are
        stored with the same label in both ("Loopback", not "Loopback, Loopback")."""
        names = [name for name in (self.city, self.country) if name]
        return ", ".join(dict.fromkeys(names)) or "Unknown"


def utc_hour(moment: datetime) -> datetime:
    """The HourlyClick bucket `moment` falls in: the start of its UTC hour."""
    if moment.tzinfo is not UTC:  # decoded visits are UTC already: a flush skips ~1 µs a visit
        moment = moment.astimezone(UTC)
    return moment.replace(minute=0, second=0, microsecond=0)


class HourlyClick(models.Model):
    """Clicks on one link in one hour (UTC), recomputed from VisitRecord, never incremented."""

    link = models.ForeignKey(UrlLink, on_delete=models.CASCADE, related_name="hourly_clicks")
    hour = models.DateTimeField()
    clicks = models.PositiveIntegerField(default=0, help_text="Clicks by people.")
    unique_visitors = models.PositiveIntegerField(default=0)
    bot_clicks = models.PositiveIntegerField(default=0, help_text="Bots and link previews.")
    last_visitors = models.PositiveIntegerField(
        default=0,
        help_text="People whose latest visit to the link is in this hour (see LinkVisitor).",
    )
    rolled_up = models.BooleanField(
        default=False,
        help_text="Written by the roll-up, with the hour's breakdown rows and LinkVisitor; a row "
        "made otherwise has its breakdowns and people read from the visits.",
    )
    # What the hour's deleted visits counted (retention and erasure, analytics.services.
    # retention): the roll-up adds them to what it counts of the visits left, so deleting raw
    # visits never lowers a total, and a visit arriving late into a purged hour adds to it.
    kept_clicks = models.PositiveIntegerField(default=0, db_default=0)
    kept_unique_visitors = models.PositiveIntegerField(default=0, db_default=0)
    kept_bot_clicks = models.PositiveIntegerField(default=0, db_default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["link", "hour"], name="hourlyclick_link_hour")
        ]
        indexes = [models.Index(fields=["hour"], name="hourlyclick_hour")]
        ordering = ["hour"]

    def __str__(self) -> str:
        return f"{self.link_id} @ {self.hour:%Y-%m-%d %H}:00 = {self.clicks}"


class LinkVisitor(models.Model):
    """One person (client_id, not a bot) per link, with the UTC hour of their latest visit.

    Kept by the hourly roll-up. Distinct people over [start, end) are then exact without reading
    the visits: when nobody's latest visit is at or after `end`, they are the people whose latest
    visit is in the range, i.e. the sum of HourlyClick.last_visitors over its hours.
    """

    link = models.ForeignKey(UrlLink, on_delete=models.CASCADE, related_name="+")
    client_id = models.CharField(max_length=40)
    last_hour = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["link", "client_id"], name="linkvisitor_link_client")
        ]
        indexes = [models.Index(fields=["link", "last_hour"], name="linkvisitor_link_last")]

    def __str__(self) -> str:
        return f"{self.link_id}: {self.client_id} last @ {self.last_hour:%Y-%m-%d %H}:00"


class BreakdownRow(models.Model):
    """People's clicks (bots' in the selectors.BOT_BREAKDOWN_FIELDS dimensions) of one link in
    one period, by one value of a breakdown: the rows selectors.breakdowns sums instead of
    grouping the visits."""

    link = models.ForeignKey(UrlLink, on_delete=models.CASCADE, related_name="+")
    dimension = models.CharField(max_length=16)  # a selectors.ROLLED_UP_DIMENSIONS name
    # The stored value ("" when unknown); for referrers the host, as referrer_host gives it.
    value = models.CharField(max_length=255, blank=True, default="")
    code = models.CharField(max_length=2, blank=True, default="")  # countries: the ISO code
    clicks = models.PositiveIntegerField(default=0)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.link_id} {self.dimension}={self.value!r}: {self.clicks}"


class HourlyBreakdown(BreakdownRow):
    """Breakdown rows of one UTC hour, recomputed with the HourlyClick row of the same hour."""

    hour = models.DateTimeField()
    # Of `clicks`, what deleted visits counted (see HourlyClick.kept_clicks).
    kept = models.PositiveIntegerField(default=0, db_default=0)

    class Meta:
        # Covering: a range's rows are summed from the index alone.
        indexes = [
            models.Index(
                fields=["link", "hour", "dimension", "value", "code", "clicks"],
                name="hourlybreakdown_covering",
            )
        ]


class DailyBreakdown(BreakdownRow):
    """The sum of a UTC day's HourlyBreakdown rows, so a month is 30 days' rows, not 720 hours'."""

    day = models.DateTimeField()  # 00:00 UTC

    class Meta:
        # Both covering. By day: a short range of a long-lived link reads its days only. By
        # value: the rows arrive grouped, so a range over most of a link's life is summed as it
        # streams, with no temporary table (~0.35 against ~1.3 µs a row: 30 days of a
        # million-visit link 37 → 11 ms). MariaDB picks by range length (docs/performance.md).
        indexes = [
            models.Index(
                fields=["link", "day", "dimension", "value", "code", "clicks"],
                name="dailybreakdown_covering",
            ),
            models.Index(
                fields=["link", "dimension", "value", "code", "day", "clicks"],
                name="dailybreakdown_by_value",
            ),
        ]


class OrphanKind(models.TextChoices):
    UNKNOWN_CODE = "unknown_code", "Unknown code"
    BARE_ROOT = "bare_root", "A short domain's bare root"
    UNKNOWN_HOST = "unknown_host", "A host that is none of ours"


class OrphanVisitCount(models.Model):
    """Requests that reached no link in one UTC hour, counted by kind, host, path and referrer
    (analytics.orphans): what people and scanners ask for that is not there."""

    hour = models.DateTimeField()
    kind = models.CharField(max_length=16, choices=OrphanKind.choices)
    host = models.CharField(max_length=253, blank=True, default="")
    path = models.CharField(max_length=255)
    referrer = models.CharField(max_length=255, blank=True, default="")
    # SHA-1 of kind, host, path and referrer: the four are too long for one unique index on
    # MariaDB (3,072 bytes), the hash is not.
    key = models.CharField(max_length=40)
    count = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name = "orphan visit count"
        constraints = [models.UniqueConstraint(fields=["hour", "key"], name="orphan_hour_key")]
        indexes = [models.Index(fields=["hour", "kind"], name="orphan_hour_kind")]

    def __str__(self) -> str:
        return f"{self.hour:%Y-%m-%d %H}:00 {self.kind} {self.host}{self.path} × {self.count}"


class ConversionKind(models.TextChoices):
    LEAD = "lead", "Lead"
    SALE = "sale", "Sale"


class Conversion(models.Model):
    """A lead or a sale a site reported for a click (analytics.services.conversions): counted
    for the click's link, with the click's country, device and referrer host copied at the time,
    so the conversions' breakdowns read this table alone. Leads, sales and revenue are COUNT and
    SUM over these rows, never a counter kept beside them."""

    kind = models.CharField(max_length=4, choices=ConversionKind.choices)
    link = models.ForeignKey(UrlLink, on_delete=models.CASCADE, related_name="conversions")
    # The link's workspace when it was reported: a sale's invoice id is unique per workspace.
    workspace = models.ForeignKey(
        "workspaces.Workspace", on_delete=models.CASCADE, related_name="conversions"
    )
    click_id = models.CharField(max_length=32)  # the visit's event_id (links.CLICK_ID_PARAM)
    event_name = models.CharField(max_length=100)
    customer_id = models.CharField(max_length=100, blank=True, default="")
    amount = models.BigIntegerField(default=0)  # a sale's, in the currency's minor units
    currency = models.CharField(max_length=3, blank=True, default="")  # ISO 4217, upper case
    invoice_id = models.CharField(max_length=100, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    # What makes a report a repeat, as SHA-1 hex (case and trailing spaces count, whatever the
    # column collation): "lead", click id, event name for a lead; "sale", workspace, invoice id
    # for a sale that has one; NULL (never equal) for a sale without. The database's unique
    # index decides which of two racing reports is the first: exact under concurrency.
    once_key = models.CharField(max_length=40, null=True, blank=True, unique=True)
    country_code = models.CharField(max_length=2, blank=True, default="")
    device_type = models.CharField(max_length=10, blank=True, default="")
    referrer_host = models.CharField(max_length=253, blank=True, default="")
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        indexes = [
            models.Index(fields=["link", "created_at"], name="conversion_link_time"),
            models.Index(fields=["workspace", "customer_id", "kind"], name="conversion_customer"),
            models.Index(fields=["click_id"], name="conversion_click"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.event_name} on link {self.link_id} @ {self.created_at:%Y-%m-%d}"


class VisitorKey(models.Model):
    """The secret that keys visitor ids in one window of ANALYTICS_VISITOR_KEY_HOURS, for visits
    stored under the "truncated" and "none" privacy modes (analytics.services.privacy).

    In the database so that every process and node keys a window's visitors alike (exact unique
    visitors within it); deleted once the window is over, after which no stored id can be
    matched to an address and User-Agent again.
    """

    window_start = models.DateTimeField(unique=True)
    secret = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"visitor key from {self.window_start:%Y-%m-%d %H:%M}"
