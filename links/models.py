import functools
import operator
from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.db.models import F, IntegerField, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from links.fields import CaseSensitiveCharField
from workspaces.deletion import hand_over_to_the_team


class RedirectType(models.IntegerChoices):
    # Plain words first: the people choosing are marketers, the number is for the technical.
    MOVED_PERMANENTLY = 301, "Permanent (301)"
    FOUND = 302, "Temporary (302, default)"
    TEMPORARY_REDIRECT = 307, "Temporary, method kept (307)"
    PERMANENT_REDIRECT = 308, "Permanent, method kept (308)"


class CodeType(models.TextChoices):
    POOL = "pool", "Pool"
    SEQUENCE = "sequence", "Sequence"
    HASH = "hash", "Hash"
    CUSTOM = "custom", "Custom alias"


class LinkStatus(models.TextChoices):
    """A link's state, the one definition every page, export and API reads (UrlLink.status_at;
    in lists with live visit counts, links.selectors.link_statuses). First match wins:

    1. revoked, whatever else;
    2. expired (past expires_at): over for good, so a link revoked, or imported, with its
       expiry before its start reads expired, never scheduled;
    3. scheduled (before valid_since): not live yet; a capped link whose cap was used up before
       its start was moved later reads scheduled until then, as its visitors see it;
    4. limit_reached (its max_visits people have been through);
    5. active.

    Archived is not a state: an archived link still redirects (the `archived` flag says it)."""

    ACTIVE = "active", "Active"
    # Before its start (valid_since): visitors get the "not live yet" page (404), not counted.
    SCHEDULED = "scheduled", "Scheduled"
    EXPIRED = "expired", "Expired"
    REVOKED = "revoked", "Revoked"
    # Its max_visits people have been through: it answers 410 like an expired link.
    LIMIT_REACHED = "limit_reached", "Visit limit reached"


# The states in which a link sends its visitors to its fallback instead of the 410 page
# (serving/fallback.py), as a visit notes them (VisitRecord.link_state) and the stats name them.
FALLBACK_STATES = (LinkStatus.EXPIRED, LinkStatus.REVOKED, LinkStatus.LIMIT_REACHED)

# Capped links whose row count has reached the cap. The row follows the live counter
# (links.visit_caps) a few seconds behind; links.selectors reads the live count on top.
ROW_LIMIT_REACHED = Q(max_visits__isnull=False, visits_used__gte=F("max_visits"))


def status_condition(status: str, now: datetime) -> Q:
    """UrlLink.status_at in SQL: the condition of the links in `status` (a LinkStatus) at `now`,
    by the rows' visit counts, first match winning as there."""
    live = Q(revoked_at__isnull=True) & (Q(expires_at__isnull=True) | Q(expires_at__gt=now))
    started = Q(valid_since__isnull=True) | Q(valid_since__lte=now)
    if status == LinkStatus.REVOKED:
        return Q(revoked_at__isnull=False)
    if status == LinkStatus.EXPIRED:
        return Q(revoked_at__isnull=True, expires_at__lte=now)
    if status == LinkStatus.SCHEDULED:
        return live & Q(valid_since__gt=now)
    if status == LinkStatus.LIMIT_REACHED:
        return live & started & ROW_LIMIT_REACHED
    if status == LinkStatus.ACTIVE:
        return live & started & ~ROW_LIMIT_REACHED
    raise ValueError(f"No link status {status!r}.")


class UrlLinkQuerySet(models.QuerySet):
    def with_status(self, status: str, now: datetime | None = None) -> "UrlLinkQuerySet":
        """The links in `status` (a LinkStatus) at `now` by the rows' counts: UrlLink.status_at
        in SQL (status_condition)."""
        return self.filter(status_condition(status, now or timezone.now()))

    def with_statuses(self, statuses, now: datetime | None = None) -> "UrlLinkQuerySet":
        """The links in any of `statuses` (LinkStatus values) at `now`, by the rows' counts."""
        now = now or timezone.now()
        conditions = [status_condition(status, now) for status in statuses]
        if not conditions:
            return self.none()
        return self.filter(functools.reduce(operator.or_, conditions))

    def active(self, now: datetime | None = None) -> "UrlLinkQuerySet":
        return self.with_status(LinkStatus.ACTIVE, now)

    def visible_to(self, user) -> "UrlLinkQuerySet":
        """Staff see every link; everyone else the links of the workspaces they belong to."""
        if user.is_staff:
            return self
        return self.in_workspaces_of(user)

    def in_workspaces_of(self, user) -> "UrlLinkQuerySet":
        """The links of the workspaces `user` is a member of (staff too: their own lists)."""
        return self.filter(workspace__memberships__user_id=user.pk)

    def reusable_plain(self, *, user, workspace_id, long_url_hashes) -> "UrlLinkQuerySet":
        """The user's active plain links (generated code, no title, expiry or special redirect)
        in the workspace for these URL hashes, newest first: what a plain create hands back
        instead of a new link. The user's own only: a create takes turns with the user's other
        creates (links.services.create.hold_owner), not with their teammates'."""
        return (
            self.active()
            .filter(
                owner=user,
                workspace_id=workspace_id,
                long_url_hash__in=list(long_url_hashes),
                code_type__in=[CodeType.POOL, CodeType.SEQUENCE, CodeType.HASH],
                title="",
                expires_at__isnull=True,
                valid_since__isnull=True,
                redirect_type=RedirectType.FOUND,
                pass_query=True,
                # A link with rules or variants sends people elsewhere: not the same link.
                rules=[],
                variants=[],
                # Nor one with a social preview: shared, it shows something else.
                og_title="",
                og_description="",
                og_image="",
            )
            .order_by("-created_at", "-id")
        )

    # Click counts come through the relations analytics adds (HourlyClick.link, VisitRecord.link),
    # so links never imports analytics for them.

    def with_total_clicks(self) -> "UrlLinkQuerySet":
        """Annotated with `total_clicks`: people's clicks, all time, from the hourly counts.

        A correlated subquery rather than a JOIN + GROUP BY: one query for a page, sortable, and
        other annotations or filters on the queryset stay unaffected.
        """
        return self.annotate(total_clicks=self._hourly_sum(F("clicks")))

    def with_all_clicks(self) -> "UrlLinkQuerySet":
        """Annotated with `all_clicks`: people's and bots' clicks (link previews too), all time,
        from the hourly counts; a correlated subquery, as with_total_clicks."""
        return self.annotate(all_clicks=self._hourly_sum(F("clicks") + F("bot_clicks")))

    def _hourly_sum(self, counted) -> Coalesce:
        hourly = self.model._meta.get_field("hourly_clicks").related_model
        clicks = (
            hourly.objects.filter(link=OuterRef("pk"))
            .order_by()
            .values("link")
            .annotate(total=Sum(counted))
            .values("total")
        )
        return Coalesce(Subquery(clicks, output_field=IntegerField()), 0)


# The default domain: SHORT_URL_BASE's host (or, without it, whatever host the site is reached
# on). Its row is made by migration 0008 and again after a flush (links.apps), always with this
# id, so a link's default needs no query and a bulk create none per link.
DEFAULT_DOMAIN_ID = 1
# RFC 1035's longest name.
HOST_MAX_LENGTH = 253


# Where a domain serves each app-association file (serving/app_links.py), by the Domain field
# that holds it (checked by links/services/app_links.py).
WELL_KNOWN_PATHS = {
    "apple_app_site_association": "/.well-known/apple-app-site-association",
    "assetlinks": "/.well-known/assetlinks.json",
}


class Domain(models.Model):
    """A host name short links are served on. Links belong to one; the same alias may exist on
    two. Staff add the extra ones; the default one has no host of its own (see
    DEFAULT_DOMAIN_ID)."""

    # Lowercase ASCII (IDNA), no port: what a request's Host header is compared with. "" for
    # the default domain only.
    host = models.CharField(max_length=HOST_MAX_LENGTH, unique=True, blank=True)
    # Where a visitor of the bare root (https://host/) is sent; "" answers the 404 page. The
    # default domain's root is the site's home page, never redirected.
    root_redirect = models.CharField(
        "bare root goes to", max_length=2048, blank=True, default="", db_default=""
    )
    # Where a visitor of an unknown code on this domain is sent; "" answers the 404 page.
    not_found_redirect = models.CharField(
        "unknown codes go to", max_length=2048, blank=True, default="", db_default=""
    )
    # Where a visitor of an expired, revoked or limit-reached link on this domain is sent when
    # the link names no fallback of its own (UrlLink.expired_url); "" answers the 410 page.
    expired_redirect = models.CharField(
        "stopped links go to", max_length=2048, blank=True, default="", db_default=""
    )
    # Kept for one workspace's links; null: any workspace's links may use it.
    # The app-association files served on this domain, as its owner set them (valid JSON, checked
    # by links/services/app_links.py): /.well-known/apple-app-site-association and
    # /.well-known/assetlinks.json, so that iOS and Android open the app for its links. "": 404.
    apple_app_site_association = models.TextField(
        "apple-app-site-association", blank=True, default="", db_default=""
    )
    assetlinks = models.TextField("assetlinks.json", blank=True, default="", db_default="")
    workspace = models.ForeignKey(
        "workspaces.Workspace",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="domains",
        help_text="Only this workspace's links may use the domain; empty: every workspace's.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "short domain"
        ordering = ["host"]

    def __str__(self) -> str:
        return self.host or "default domain"

    @property
    def is_default(self) -> bool:
        return self.pk == DEFAULT_DOMAIN_ID

    @property
    def served_files(self) -> list[str]:
        """The /.well-known/ paths of the app-association files this domain serves."""
        return [path for field, path in WELL_KNOWN_PATHS.items() if getattr(self, field)]


TAG_MAX_LENGTH = 50

# The query parameter a link that tracks conversions adds to its destination: the click's id
# (the visit's event_id, 32 hex digits), which the site hands back with a lead or a sale
# (analytics.services.conversions). Named once: the redirect, the snippet and the docs use it.
CLICK_ID_PARAM = "sc_cid"


def tag_key(name: str) -> str:
    """What makes two spellings one tag (Tag.key): `Spring Sale` and ` spring sale` are the
    same. Every lookup, filter and comparison of tags by name goes through this."""
    return name.strip().lower()


class Tag(models.Model):
    """A marketer's free label for links (`spring-sale`, `Newsletter`): one per workspace and
    name, whatever the case. The name is kept as first typed; `key` (the lowercased name) is
    what makes two spellings one tag."""

    workspace = models.ForeignKey(
        "workspaces.Workspace", on_delete=models.CASCADE, related_name="tags"
    )
    name = models.CharField(max_length=TAG_MAX_LENGTH)
    # A column rather than a unique index on Lower(name): MariaDB has no functional index, and
    # a binary collation keeps MySQL from also folding accents (café ≠ cafe).
    key = CaseSensitiveCharField(max_length=2 * TAG_MAX_LENGTH)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["key"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "key"], name="tag_workspace_key")
        ]

    def __str__(self) -> str:
        return self.name


class HealthStatus(models.TextChoices):
    """A link's destination health (links.services.health decides it)."""

    OK = "ok", "OK"
    BROKEN = "broken", "Broken"
    UNKNOWN = "unknown", "Not checked yet"


class CheckError(models.TextChoices):
    """Why one check of a destination failed (LinkCheck.error); soft404 is a hint only."""

    TLS = "tls", "TLS error"
    DNS = "dns", "Name not resolved"
    TIMEOUT = "timeout", "Timed out"
    REFUSED = "refused", "Connection refused or not allowed"
    HTTP = "http", "Error status"
    SOFT404 = "soft404", "Looks like a 'not found' page"
    # The address rule (links.outbound) refused it, or a redirect on the way: not fetched, and
    # never counted against the destination (it may well work for visitors).
    BLOCKED = "blocked", "Not checked: address not allowed"


class UrlLink(models.Model):
    # Unique per domain (link_code_domain): an alias may be taken on two domains. Generated
    # codes stay unique across all of them (the pool, the sequence and the hash check see every
    # domain), so a code filter of bare codes serves every domain.
    code = CaseSensitiveCharField(max_length=32)
    # PROTECT: a domain with links keeps serving them; it cannot vanish under them. The
    # database default too: code that predates the column (a process during a rolling upgrade,
    # data migrations' historical models) still inserts links on the default domain.
    domain = models.ForeignKey(
        Domain,
        on_delete=models.PROTECT,
        related_name="links",
        default=DEFAULT_DOMAIN_ID,
        db_default=DEFAULT_DOMAIN_ID,
    )
    long_url = models.CharField(max_length=2048)
    # SHA-1 of the long URL: an indexable stand-in for a column too long to index. Indexed
    # with the owner (link_owner_url_hash: a plain create's reuse, UrlLinkQuerySet.reusable_plain)
    # and with the workspace (link_workspace_url_hash: "the active links to this URL" in a
    # workspace, links.selectors._active_links_to's callers); no lookup is by hash alone.
    long_url_hash = models.CharField(max_length=40)
    # Who made it; the workspace is whose it is (who sees and changes it).
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=hand_over_to_the_team, related_name="links"
    )
    workspace = models.ForeignKey(
        "workspaces.Workspace", on_delete=models.CASCADE, related_name="links"
    )
    title = models.CharField(max_length=200, blank=True, default="")
    redirect_type = models.PositiveSmallIntegerField(
        choices=RedirectType.choices, default=RedirectType.FOUND
    )
    code_type = models.CharField(max_length=10, choices=CodeType.choices)
    seq_id = models.BigIntegerField(null=True, blank=True, unique=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    # Its start: before it, the link is scheduled (LinkStatus), not live yet. Null: live at once.
    valid_since = models.DateTimeField("starts", null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # A visitor's `?utm_source=…` goes on to the destination (its own keys win); off for
    # destinations that refuse unknown parameters. The database default too: code that predates
    # the column (a process during a rolling upgrade, data migrations' historical models) can
    # still insert rows.
    pass_query = models.BooleanField(
        "pass query string on",
        default=True,
        db_default=True,
        help_text="Add the query string a visitor brings (?utm_source=…) to the long URL.",
    )
    # Gates: a link with any of these is decided in serving/gates.py, not by the fused
    # read-and-count of the redirect's cache entry (see LinkEntry.gated).
    # Django's password hash (never the password): visitors unlock the link with a form.
    password_hash = models.CharField(max_length=128, blank=True, default="", db_default="")
    # After this many clicks by people the link answers 410 (bots and HEAD never count, and are
    # not sent on: serving/gates.py).
    max_visits = models.PositiveIntegerField(null=True, blank=True)
    # Visits taken from the cap so far: the truth in both modes, taken one at a time by a
    # conditional UPDATE (serving/gates.py), so no more than max_visits people ever get through.
    visits_used = models.PositiveIntegerField(default=0, db_default=0, editable=False)
    # [{"device"?, "os"?, "country"?, "language"?, "url"}]: the first rule whose every given key
    # matches the visitor sends them to its url.
    rules = models.JSONField(default=list, blank=True, db_default=[])
    # [{"url", "weight"}], 2–4 of them: an A/B split of the people who click.
    variants = models.JSONField(default=list, blank=True, db_default=[])
    # Hidden from the default lists (API and My links) but still redirecting; reversible.
    archived = models.BooleanField(default=False, db_default=False)
    # The fallback: where a visitor of this link is sent (302) once it is expired, revoked or
    # at its visit limit, instead of the 410 page; "" falls back to the domain's
    # expired_redirect, then the 410 page. Not before its start (scheduled: the 404 page).
    expired_url = models.CharField(
        "fallback URL", max_length=2048, blank=True, default="", db_default=""
    )
    # App deep links (links/services/app_links.py): where a visitor on iOS (iPadOS too) or on
    # Android is sent when no targeting rule took them, instead of the variants or the long
    # URL: an app's own scheme (`myapp://item/7`), a universal or app link (https), or
    # mailto:/tel:/sms:. "" for none: that OS's visitors go where everyone else does.
    ios_url = models.CharField("iOS URL", max_length=2048, blank=True, default="", db_default="")
    android_url = models.CharField(
        "Android URL", max_length=2048, blank=True, default="", db_default=""
    )
    # Conversions (analytics/services/conversions.py): the redirect appends the click's id (the
    # visit's event_id, as CLICK_ID_PARAM) to a web destination, and leads and sales reported
    # with it are counted against this link. Off: the Location is the marketer's URL as written.
    track_conversions = models.BooleanField(
        "track conversions",
        default=False,
        db_default=False,
        help_text=f"Add a click id (?{CLICK_ID_PARAM}=…) to the destination, so leads and sales "
        "your site "
        "reports with it count for this link.",
    )
    tags = models.ManyToManyField(Tag, related_name="links", blank=True)
    # Social preview (issue #28): what a link-preview fetcher (Facebook, X, LinkedIn, Slack, …;
    # analytics.bots.is_link_preview) is shown instead of the redirect, as Open Graph and
    # Twitter Card tags (serving/gates.py). All empty: fetchers get the redirect, as people do.
    # The image is an https URL that passed the long-URL policy (links/services/previews.py).
    og_title = models.CharField(
        "preview title", max_length=200, blank=True, default="", db_default=""
    )
    og_description = models.CharField(
        "preview description", max_length=500, blank=True, default="", db_default=""
    )
    og_image = models.CharField(
        "preview image URL", max_length=2048, blank=True, default="", db_default=""
    )

    # Destination health (issue #29, links/services/health.py): where visitors go while a
    # destination is broken (automatic failover, through the long-URL policy); "" none: they
    # still go to the broken destination.
    fallback_url = models.CharField(
        "failover URL", max_length=2048, blank=True, default="", db_default=""
    )
    # The current health, changed only by links.services.health (a conditional UPDATE, so two
    # checkers racing cannot both announce one change): since when, and why.
    health_status = models.CharField(
        "health",
        max_length=8,
        choices=HealthStatus.choices,
        default=HealthStatus.UNKNOWN,
        db_default=HealthStatus.UNKNOWN,
    )
    health_since = models.DateTimeField(null=True, blank=True)
    health_reason = models.CharField(max_length=300, blank=True, default="", db_default="")
    # The last check of its destinations; null: never checked (first in the checker's line).
    health_checked_at = models.DateTimeField(null=True, blank=True)
    # When its turn comes again: sooner while broken or after a failed check, so that a
    # destination that fails is confirmed broken (and a broken one seen recovered) within
    # LINK_CHECK_BROKEN_SECONDS; null: never checked, first in the checker's line. A checker
    # moves it past its pass before fetching (its claim, links.services.health._claim), and
    # records only while it stands: an edit of the destinations resets it.
    health_next_check_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = UrlLinkQuerySet.as_manager()

    class Meta:
        verbose_name = "short link"
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["owner", "-created_at"], name="link_owner_created"),
            models.Index(fields=["owner", "long_url_hash"], name="link_owner_url_hash"),
            # created_at too: "the newest active link to this URL" reads its first row in order,
            # with no sort (and SQLite, which keeps no statistics, picks it over the next one).
            models.Index(
                fields=["workspace", "long_url_hash", "created_at"], name="link_workspace_url_hash"
            ),
            models.Index(fields=["workspace", "-created_at"], name="link_workspace_created"),
            # The health checker's line: the links whose turn has come (never checked first).
            models.Index(fields=["health_next_check_at"], name="link_health_next_check"),
        ]
        constraints = [
            # The code first: lookups by code alone (generated codes, the admin) use it too.
            models.UniqueConstraint(fields=["code", "domain"], name="link_code_domain"),
        ]

    def __str__(self) -> str:
        return f"{self.code} → {self.long_url[:60]}"

    @property
    def domain_host(self) -> str:
        """The link's extra short domain's host; "" on the default domain (known without a
        query)."""
        return "" if self.domain_id == DEFAULT_DOMAIN_ID else self.domain.host

    def status_at(self, now: datetime | None = None, *, visits_used: int | None = None) -> str:
        """The link's LinkStatus at `now` (LinkStatus says which state wins). `visits_used`: the
        live count of a capped link's visits (links.services.gates.visits_used, or
        capped_visits_used for a page of links), which is what the redirect goes by; without
        it, the row's count, a few seconds behind."""
        if self.revoked_at is not None:
            return LinkStatus.REVOKED
        if self.expires_at is not None or self.valid_since is not None:
            now = now or timezone.now()
            if self.expires_at is not None and self.expires_at <= now:
                return LinkStatus.EXPIRED
            if self.valid_since is not None and self.valid_since > now:
                return LinkStatus.SCHEDULED
        if self.max_visits is not None:
            used = self.visits_used if visits_used is None else visits_used
            if used >= self.max_visits:
                return LinkStatus.LIMIT_REACHED
        return LinkStatus.ACTIVE

    @property
    def status(self) -> str:
        return self.status_at()

    @property
    def has_preview(self) -> bool:
        """A social preview is set: link-preview fetchers get its page, not the redirect."""
        return bool(self.og_title or self.og_description or self.og_image)

    @property
    def shown_expiry(self) -> datetime | None:
        """The expiry to show people: none for a revoked link (revoking sets its expiry to the
        moment of the revoke, which would read as "expires <past time>")."""
        return None if self.revoked_at is not None else self.expires_at

    @property
    def ended_at(self) -> datetime | None:
        """When the link stopped redirecting: its revoke, else its expiry once past; None while
        it works. Pages say "revoked <when>" / "expired <when>" with it, never "expires <past>"."""
        if self.revoked_at is not None:
            return self.revoked_at
        if self.expires_at is not None and self.expires_at <= timezone.now():
            return self.expires_at
        return None

    @property
    def is_active(self) -> bool:
        return self.status == LinkStatus.ACTIVE


class UniqueCodeStatus(models.TextChoices):
    UNUSED = "unused", "Unused"
    USED = "used", "Used"


class UniqueCode(models.Model):
    """A pre-generated code of the `pool` strategy (a random draw); the unique index is the ground
    truth for uniqueness."""

    code = CaseSensitiveCharField(max_length=32, unique=True)
    status = models.CharField(
        max_length=8, choices=UniqueCodeStatus.choices, default=UniqueCodeStatus.UNUSED
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "pool code"
        # The admin shows the pool as a whole (counts), not code by code.
        verbose_name_plural = "code pool"
        indexes = [models.Index(fields=["status", "id"], name="uniquecode_status_id")]

    def __str__(self) -> str:
        return f"{self.code} ({self.status})"


# A running import moves its row on after every batch (seconds apart); one whose row has not
# moved for this long was interrupted (its process ended).
IMPORT_STALE_AFTER = timedelta(minutes=10)


class ImportStatus(models.TextChoices):
    QUEUED = "queued", "Waiting"
    RUNNING = "running", "Importing"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class LinkImport(models.Model):
    """A file uploaded on the import page: waiting for the background run, being imported, or
    imported with its report (links.imports.service). The file lives in the row until it has
    been read, so any worker of any node can run it."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=hand_over_to_the_team, related_name="link_imports"
    )
    # Where the imported links go: the uploader's current workspace when they uploaded.
    workspace = models.ForeignKey(
        "workspaces.Workspace", on_delete=models.CASCADE, related_name="link_imports"
    )
    file_name = models.CharField(max_length=255)
    data = models.BinaryField(default=b"")  # the upload; emptied once it has been read
    # What the uploader chose: a links.imports.formats.FORMATS key ("" = told from the content), a
    # short domain's host for every link ("" = each link's own), new/skip for codes not kept.
    file_format = models.CharField(max_length=20, blank=True, default="")
    domain = models.CharField(max_length=HOST_MAX_LENGTH, blank=True, default="")
    on_taken_code = models.CharField(max_length=8, default="new")
    dry_run = models.BooleanField(default=False)
    # The Host the upload came to: the default domain's name when SHORT_URL_BASE is unset, and
    # a host the imported URLs may not point back to, as for links made on the page.
    request_host = models.CharField(max_length=HOST_MAX_LENGTH + 6, blank=True, default="")
    status = models.CharField(
        max_length=8, choices=ImportStatus.choices, default=ImportStatus.QUEUED
    )
    rows_total = models.PositiveIntegerField(default=0)
    rows_done = models.PositiveIntegerField(default=0)
    report = models.JSONField(default=dict, blank=True)  # ImportReport.as_dict()
    error = models.TextField(blank=True, default="")  # why a failed import stopped
    created_at = models.DateTimeField(auto_now_add=True)
    # Moved on by every batch: a running import whose row stops changing was interrupted.
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "link import"
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "id"], name="linkimport_status_id")]

    def __str__(self) -> str:
        return f"{self.file_name} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (ImportStatus.DONE, ImportStatus.FAILED)

    @property
    def interrupted(self) -> bool:
        """Running, but its row has not moved on for IMPORT_STALE_AFTER: its process ended."""
        return (
            self.status == ImportStatus.RUNNING
            and self.updated_at < timezone.now() - IMPORT_STALE_AFTER
        )


class QrErrorLevel(models.TextChoices):
    L = "l", "L (7 % can be lost)"
    M = "m", "M (15 %)"
    Q = "q", "Q (25 %)"
    H = "h", "H (30 %)"


class QrDesign(models.Model):
    """How a link's QR code looks (#28): its colours, error-correction level and centre logo.
    Only links.services.qr_design writes it (every rule that keeps the code scannable is there);
    a link without one has the plain black-on-white code."""

    link = models.OneToOneField(UrlLink, on_delete=models.CASCADE, related_name="qr_design")
    foreground = models.CharField(max_length=7, default="#000000")
    background = models.CharField(max_length=7, default="#ffffff")
    error_level = models.CharField(
        max_length=1, choices=QrErrorLevel.choices, default=QrErrorLevel.M
    )
    # Always a PNG re-encoded here (an uploaded SVG is rasterised), in the default storage under
    # qr-logos/, named by its content's hash; never served on its own, only inside a QR code.
    logo = models.FileField(upload_to="qr-logos/", blank=True, max_length=200)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "QR design"

    def __str__(self) -> str:
        return f"QR design of {self.link_id}"


class LinkCheck(models.Model):
    """One check of one of a link's destinations by the health checker: what it answered. Kept
    per link up to settings.LINK_CHECK_HISTORY (the oldest dropped), so it never grows without
    bound."""

    link = models.ForeignKey(UrlLink, on_delete=models.CASCADE, related_name="checks")
    checked_at = models.DateTimeField()
    url = models.CharField(max_length=2048)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    final_url = models.CharField(max_length=2048, blank=True, default="")
    elapsed_ms = models.PositiveIntegerField(default=0)
    error = models.CharField(max_length=8, choices=CheckError.choices, blank=True, default="")
    detail = models.CharField(max_length=300, blank=True, default="")
    ok = models.BooleanField()

    class Meta:
        verbose_name = "destination check"
        ordering = ["-checked_at", "-id"]
        indexes = [models.Index(fields=["link", "-checked_at"], name="linkcheck_link_time")]

    def __str__(self) -> str:
        return f"{self.url} {'ok' if self.ok else self.error}"
