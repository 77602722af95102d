"""Reads of links for pages and APIs. Writes live in links.services."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from datetime import UTC, datetime
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ImproperlyConfigured, PermissionDenied, ValidationError
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Sum
from django.db.models.functions import Lower
from django.http import HttpRequest
from django.http.request import split_domain_port
from django.utils import timezone

from core.errors import FieldProblem, NotFound
from links.domains import current_table, host_form, hostname_of
from links.models import (
    DEFAULT_DOMAIN_ID,
    ROW_LIMIT_REACHED,
    Domain,
    ImportStatus,
    LinkCheck,
    LinkImport,
    LinkStatus,
    Tag,
    UrlLink,
    tag_key,
)
from links.services.gates import capped_visits_used
from links.services.policy import url_hash, validate_long_url
from links.shortlinks import link_short_url
from links.visit_caps import live_counts
from workspaces.selectors import (
    can_write,
    role_in,
    workspace_id_or_personal,
    workspace_ids_of,
)


class LinkNotFound(NotFound):
    """No such link, or not one the caller may see (the two are told apart to nobody)."""

    public_message = "No link with this code."


class AmbiguousCode(LinkNotFound, FieldProblem):
    """The caller has links with this code on several domains and named none of them."""

    def __init__(self, code: str, hosts: list[str]):
        FieldProblem.__init__(
            self,
            "domain",
            f"You have links with this code on several domains ({', '.join(hosts)}): add "
            "?domain=<host> to say which.",
        )
        self.args = (code,)
        self.hosts = hosts


class TagNotFound(NotFound):
    """The caller has no tag of that name."""

    public_message = "You have no tag of that name."


# One definition of the list orders, for the "My links" form, the selector and the Shlink
# layer's orderBy: key → (label, ORDER BY). Every order ends on the id, so equal values (the
# same title, no clicks) always come in the same order and pages never repeat or skip a link.
# Text is compared lowercased, alike on SQLite and MariaDB; a link without a title sorts as "".
# Clicks are people's; "bots included" adds bots' and link previews' (the hourly roll-ups).
LINK_ORDERS = {
    "newest": ("Newest first", ("-created_at", "-id")),
    "oldest": ("Oldest first", ("created_at", "id")),
    "code": ("Short code A–Z", ("code", "-id")),
    "code_desc": ("Short code Z–A", ("-code", "-id")),
    "title": ("Title A–Z", (Lower("title").asc(), "-id")),
    "title_desc": ("Title Z–A", (Lower("title").desc(), "-id")),
    "long_url": ("Long URL A–Z", (Lower("long_url").asc(), "-id")),
    "long_url_desc": ("Long URL Z–A", (Lower("long_url").desc(), "-id")),
    "expires": ("Expiring soonest", ("expires_at", "-created_at", "-id")),
    "clicks": ("Most clicked", ("-total_clicks", "-created_at", "-id")),
    "clicks_asc": ("Least clicked", ("total_clicks", "-created_at", "-id")),
    "all_clicks": ("Most clicked, bots included", ("-all_clicks", "-created_at", "-id")),
    "all_clicks_asc": ("Least clicked, bots included", ("all_clicks", "-created_at", "-id")),
}
DEFAULT_ORDER = "newest"
# The annotations an order sorts by → the UrlLinkQuerySet method that adds it.
_ORDER_ANNOTATIONS = {"total_clicks": "with_total_clicks", "all_clicks": "with_all_clicks"}
# How `tags` select: links carrying every tag named, or any one of them.
TAGS_ALL, TAGS_ANY = "all", "any"
# The states of a link that has stopped (My links' "Stopped" filter): scheduled links have not
# started, so they are not among them (though, like these, they are not active).
STOPPED = frozenset({LinkStatus.EXPIRED, LinkStatus.REVOKED, LinkStatus.LIMIT_REACHED})


def link_get_visible(
    *,
    code: str,
    user: AbstractBaseUser,
    domain: str | None = None,
    request_host: str = "",
    workspace_id: int | None = None,
) -> UrlLink:
    """The link for `code` if `user` may see it (a member of its workspace, or staff), else
    LinkNotFound. `workspace_id`: only that workspace's (an API key acts for one).

    `domain` names the short domain (a host, as the API and pages show it) when the same code
    may be on several. Without it: the default domain's link, else the only one the user sees;
    AmbiguousCode when there are several. `request_host` is the request's Host, which names
    the default domain when SHORT_URL_BASE is unset.
    """
    links = UrlLink.objects.visible_to(user).select_related("owner", "domain", "workspace")
    links = links.filter(code=code)
    if workspace_id is not None:
        links = links.filter(workspace_id=workspace_id)
    if domain:
        domain_id = domain_id_for_name(domain, request_host=request_host)
        if domain_id is None:
            raise LinkNotFound(code)
        links = links.filter(domain_id=domain_id)
    # The default domain's id is the lowest: its link comes first.
    return _the_link_of(code, list(links.order_by("domain_id")[:10]))


def _the_link_of(code: str, found: list[UrlLink]) -> UrlLink:
    """Which of the caller's links with `code` (ordered by domain id) a call naming no domain
    means: the default domain's, else the only one; LinkNotFound or AmbiguousCode."""
    if not found:
        raise LinkNotFound(code)
    if len(found) > 1 and found[0].domain_id != DEFAULT_DOMAIN_ID:
        raise AmbiguousCode(code, [link.domain.host for link in found])
    return found[0]


def may_change_every_link(user: AbstractBaseUser) -> bool:
    """Staff with the admin's `links.change_urllink` permission (the one its revoke action asks
    for): they may change any link, whichever workspace it is in, and so that workspace's tags
    (links.services.tags), which they could take off every link one by one anyway."""
    return user.has_perm("links.change_urllink")


def link_get_changeable(
    *,
    code: str,
    user: AbstractBaseUser,
    domain: str | None = None,
    request_host: str = "",
    workspace_id: int | None = None,
) -> UrlLink:
    """The link for `code` (and `domain`, `workspace_id`, see link_get_visible) if `user` may
    change it: an owner or editor of its workspace, or staff with the admin's
    `links.change_urllink` permission (the same one the admin's revoke action asks for).
    Viewers and staff who may only look get PermissionDenied; everyone else LinkNotFound."""
    link = link_get_visible(
        code=code,
        user=user,
        domain=domain,
        request_host=request_host,
        workspace_id=workspace_id,
    )
    if not may_change_every_link(user) and not can_write(user=user, workspace_id=link.workspace_id):
        raise _viewers_refused(link)
    return link


def _viewers_refused(link: UrlLink) -> PermissionDenied:
    return PermissionDenied(
        f"Viewers of the workspace {link.workspace.slug!r} cannot change its links."
    )


def links_get_changeable_many(
    *,
    user: AbstractBaseUser,
    codes: Collection[str] = (),
    ids: Collection[int] = (),
    workspace_id: int | None = None,
) -> dict[str | int, UrlLink | LinkNotFound | PermissionDenied]:
    """link_get_changeable for many links at once (a bulk change), in three queries: {code or
    id: the link, or the refusal link_get_changeable would raise for it}. `codes` name no
    domain (link_get_visible's rule picks one; AmbiguousCode when it cannot); `ids` (the
    admin's selection) name one link each."""
    links = UrlLink.objects.visible_to(user).select_related("domain", "workspace")
    if workspace_id is not None:
        links = links.filter(workspace_id=workspace_id)
    answers: dict[str | int, UrlLink | LinkNotFound | PermissionDenied] = {}
    if codes:
        by_code: dict[str, list[UrlLink]] = {code: [] for code in codes}
        for link in links.filter(code__in=list(by_code)).order_by("domain_id"):
            by_code[link.code].append(link)
        for code, found in by_code.items():
            try:
                answers[code] = _the_link_of(code, found)
            except LinkNotFound as refusal:
                answers[code] = refusal
    if ids:
        found_ids = {link.pk: link for link in links.filter(pk__in=list(ids))}
        for pk in ids:
            answers[pk] = found_ids.get(pk) or LinkNotFound(str(pk))
    if not may_change_every_link(user):
        writable = {row["workspace_id"] for row in workspace_ids_of(user, writers_only=True)}
        for key, link in answers.items():
            if isinstance(link, UrlLink) and link.workspace_id not in writable:
                answers[key] = _viewers_refused(link)
    return answers


def link_list(
    *,
    user: AbstractBaseUser,
    search: str | None = None,
    active: bool | None = None,
    order: str = DEFAULT_ORDER,
    owned_only: bool = True,
    tags: list[str] | None = None,
    archived: bool = False,
    domain: str | None = None,
    request_host: str = "",
    include_revoked: bool = True,
    workspace_id: int | None = None,
    exclude_expired: bool = False,
    exclude_limit_reached: bool = False,
    tags_mode: str = TAGS_ALL,
    created_from: datetime | None = None,
    created_until: datetime | None = None,
    statuses: Collection[str] | None = None,
    exclude_tags: list[str] | None = None,
    exclude_tags_mode: str = TAGS_ANY,
    health: str | None = None,
) -> QuerySet[UrlLink]:
    """Links `user` may see, newest first by default.

    `owned_only=False` lets staff see every link; everyone else (and staff by default) sees the
    links of the workspaces they belong to. `workspace_id`: one workspace's only (resolved by
    the caller with workspaces.selectors.workspace_get, which checks membership; staff may
    name any).
    `search` matches long URL, title and code; `active` keeps the active links (True) or every
    other one (False: scheduled, expired, revoked, limit reached); `statuses` the links in any
    of those LinkStatus values (both given: the links that pass both).
    `tags`: only links carrying every one of them (any case), or with `tags_mode=TAGS_ANY` at
    least one of them. `exclude_tags`: leave out the links carrying any of them (any case), or
    with `exclude_tags_mode=TAGS_ALL` only those carrying every one (Shlink's excludeTags and
    excludeTagsMode, whose default is any too); both given, a link must pass both. Archived
    links are left out unless `archived` is True (then they are listed with the others).
    `domain`: only the links on that short domain (a host; the
    default one's name too, see domain_id_for_name).
    `include_revoked=False` leaves revoked links out (expired ones stay: for APIs whose delete
    is our revoke, such as the Shlink layer). `exclude_expired`, `exclude_limit_reached`: leave
    out the links past their expiry, the ones whose visit limit is reached (Shlink's
    excludePastValidUntil and excludeMaxVisitsReached). `created_from`, `created_until`: only
    the links created in that span, both ends included. `health`: only the links whose
    destination health (links.services.health) is that HealthStatus value. `order`: a key of
    LINK_ORDERS.
    """
    for mode in (tags_mode, exclude_tags_mode):
        if mode not in (TAGS_ALL, TAGS_ANY):
            raise ValueError(f"No tags mode {mode!r}.")
    links = UrlLink.objects.select_related("owner", "domain", "workspace")
    if workspace_id is not None and user.is_staff:
        links = links.filter(workspace_id=workspace_id)
    elif owned_only or not user.is_staff:
        links = links.in_workspaces_of(user)
        if workspace_id is not None:
            links = links.filter(workspace_id=workspace_id)
    if not include_revoked:
        links = links.filter(revoked_at__isnull=True)
    if not archived:
        links = links.filter(archived=False)
    if domain:
        domain_id = domain_id_for_name(domain, request_host=request_host)
        links = links.none() if domain_id is None else links.filter(domain_id=domain_id)
    keys = [key for key in dict.fromkeys(tag_key(name) for name in tags or []) if key]
    if keys and tags_mode == TAGS_ANY:
        # A subquery, not a join: a link with two of the tags still comes once.
        carrying = UrlLink.tags.through.objects.filter(urllink_id=OuterRef("pk"), tag__key__in=keys)
        links = links.filter(Exists(carrying))
    else:
        # One join per tag: a link matches when it has them all. A link carries only its
        # workspace's tags, at most one per key, so no row comes twice.
        for key in keys:
            links = links.filter(tags__key=key)
    links = _without_tags(links, exclude_tags or [], mode=exclude_tags_mode)
    if health:
        links = links.filter(health_status=health)
    if created_from is not None:
        links = links.filter(created_at__gte=created_from)
    if created_until is not None:
        links = links.filter(created_at__lte=created_until)
    if search:
        search = search.strip()
        links = links.filter(
            Q(long_url__icontains=search) | Q(title__icontains=search) | Q(code=search)
        )
    now = timezone.now()
    wanted = None if statuses is None else frozenset(statuses)
    if active is not None:
        others = frozenset(LinkStatus.values) - {LinkStatus.ACTIVE}
        by_active = frozenset({LinkStatus.ACTIVE}) if active else others
        wanted = by_active if wanted is None else wanted & by_active
    if wanted is not None:
        links = _in_statuses(links, wanted, now)
    if exclude_expired:
        links = links.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
    if exclude_limit_reached:
        reached = _live_limit_reached(links, now)
        links = links.exclude(ROW_LIMIT_REACHED).exclude(pk__in=reached)
    _, ordering = LINK_ORDERS.get(order, LINK_ORDERS[DEFAULT_ORDER])
    for field in ordering:
        annotate = isinstance(field, str) and _ORDER_ANNOTATIONS.get(field.lstrip("-"))
        if annotate:
            links = getattr(links, annotate)()
    return links.order_by(*ordering)


def _without_tags(links: QuerySet[UrlLink], names: list[str], *, mode: str) -> QuerySet[UrlLink]:
    """`links` but those carrying any of the tags `names` (any case), or with mode TAGS_ALL
    every one of them: subqueries, so a link with none of the tags stays whatever it carries."""
    keys = [key for key in dict.fromkeys(tag_key(name) for name in names) if key]
    if not keys:
        return links
    through = UrlLink.tags.through.objects.filter(urllink_id=OuterRef("pk"))
    if mode == TAGS_ANY:
        return links.exclude(Exists(through.filter(tag__key__in=keys)))
    carrying_all = Q()
    for key in keys:
        carrying_all &= Q(Exists(through.filter(tag__key=key)))
    return links.exclude(carrying_all)


# The most open capped links a filtered list reads the live counts of (one MGET of that many
# keys at most); beyond it the rows' counts alone decide, a few seconds behind.
LIVE_FILTER_MAX = 5000


def _in_statuses(links: QuerySet[UrlLink], statuses: frozenset[str], now) -> QuerySet[UrlLink]:
    """`links` in any of `statuses` (LinkStatus values) at `now`. The rows' counts trail the
    live ones by seconds: links whose live count has reached the cap already are
    limit_reached, not active, as their visitors see them."""
    unknown = statuses - set(LinkStatus.values)
    if unknown:
        raise ValueError(f"No link status {sorted(unknown)!r}.")
    picked = links.with_statuses(statuses, now)
    counted = statuses & {LinkStatus.ACTIVE, LinkStatus.LIMIT_REACHED}
    if len(counted) == 1:  # with both or neither, where a capped link stands changes nothing
        reached = _live_limit_reached(links, now)
        if reached and LinkStatus.ACTIVE in counted:
            picked = picked.exclude(pk__in=reached)
        elif reached:
            picked = picked | links.filter(pk__in=reached)
    return picked


def _live_limit_reached(links: QuerySet[UrlLink], now) -> list[int]:
    """Ids of `links` that are active by their rows but whose live visit count has reached
    their cap: one query and one batched count read (one MGET, or the node's files)."""
    rows = list(
        links.active(now)
        .filter(max_visits__isnull=False)
        .order_by()
        .values_list("pk", "visits_used", "max_visits")[: LIVE_FILTER_MAX + 1]
    )
    if not rows or len(rows) > LIVE_FILTER_MAX:
        return []
    used = live_counts({pk: row_used for pk, row_used, _ in rows})
    return [pk for pk, _, cap in rows if used[pk] >= cap]


def link_statuses(links: Iterable[UrlLink], *, now=None) -> dict[int, LinkStatus]:
    """{link id: LinkStatus} for a page of links, the capped ones by their live visit counts,
    read together (what the redirect goes by); the one way lists, pages and exports say a
    link's state."""
    links = list(links)
    now = now or timezone.now()
    used = capped_visits_used(links)
    return {link.pk: link.status_at(now, visits_used=used.get(link.pk)) for link in links}


def _active_links_to(
    long_url: str, *, request_host: str, statuses: Collection[str] = (LinkStatus.ACTIVE,)
) -> QuerySet[UrlLink] | None:
    """Active links (or those in `statuses`) to exactly `long_url`, read as a create would
    store it (the long-URL rules, LongUrlRules.check: `example.com/page` finds
    https://example.com/page); None for a URL the rules refuse, which has no link (the create
    says why)."""
    try:
        long_url = validate_long_url(long_url, request_host=request_host)
    except ValidationError:
        return None
    return (
        UrlLink.objects.with_statuses(statuses)
        .select_related("owner", "domain")
        .filter(long_url_hash=url_hash(long_url))
        .filter(long_url=long_url)
    )


def link_find_existing(
    *,
    user: AbstractBaseUser,
    long_url: str,
    domain: str | None = None,
    alias: str | None = None,
    tags: list[str] | None = None,
    request_host: str = "",
    workspace_id: int | None = None,
    valid_since: datetime | None = None,
) -> UrlLink | None:
    """The newest active link to exactly this long URL on that short domain in the workspace
    (default: the user's personal one), else None.

    `alias`: only the link with that code; `tags`: only a link carrying every one of them (any
    case); `valid_since`: only a link starting then, active or still scheduled (as Shlink
    matches validSince). For "find it if it exists" creates (the Shlink layer's findIfExists),
    whatever other options the link has.
    """
    statuses = (LinkStatus.ACTIVE,)
    if valid_since is not None:
        statuses = (LinkStatus.ACTIVE, LinkStatus.SCHEDULED)
    links = _active_links_to(long_url, request_host=request_host, statuses=statuses)
    domain_id = domain_id_for_name(domain or "", request_host=request_host)
    if links is None or domain_id is None:
        return None
    links = links.filter(
        workspace_id=workspace_id_or_personal(user=user, workspace_id=workspace_id),
        domain_id=domain_id,
    )
    if valid_since is not None:
        links = links.filter(valid_since=valid_since)
    if alias:
        links = links.filter(code=alias.strip())
    for key in dict.fromkeys(tag_key(name) for name in tags or []):
        if key:
            links = links.filter(tags__key=key)
    return links.order_by("-created_at", "-id").first()


def link_for_long_url(
    *,
    user: AbstractBaseUser,
    long_url: str,
    request_host: str = "",
    workspace_id: int | None = None,
) -> UrlLink | None:
    """A link of the user's workspaces that takes every visitor to exactly this long URL, else
    None: what "this URL is already shortened" means for a channel that keeps one link per URL
    (YOURLS's unique URLs, compat.yourls), whatever that link's code, title or short domain.

    Only the workspaces `user` is a member of, staff included (never everyone's links: someone
    else's link is not theirs to be handed); only `workspace_id`'s when given (an API key acts
    for one). The link sends everyone there now: active (capped links by their live count), no
    password, rules or variants. Several: the default domain's first, then the newest.
    """
    links = _active_links_to(long_url, request_host=request_host)
    if links is None:
        return None
    links = links.in_workspaces_of(user).filter(password_hash="", rules=[], variants=[])
    if workspace_id is not None:
        links = links.filter(workspace_id=workspace_id)
    # One membership per user and workspace: the join repeats no link.
    candidates = list(links.order_by("domain_id", "-created_at", "-id")[:10])
    statuses = link_statuses(candidates)
    return next((link for link in candidates if statuses[link.pk] == LinkStatus.ACTIVE), None)


# Clicks and unique visitors are analytics' roll-ups, and analytics sits above links: it hands
# its reader in when Django starts (analytics.apps.AnalyticsConfig.ready), so links imports none
# of it and every page that lists links still counts the way the stats do.
ClickTotalsReader = Callable[..., dict[int, dict[str, int]]]
_click_totals_reader: ClickTotalsReader | None = None


def click_totals_reader_set(reader: ClickTotalsReader) -> None:
    """Where link_click_totals reads from: called once, by the analytics app."""
    global _click_totals_reader
    _click_totals_reader = reader


def link_click_totals(*, link_ids: list[int], people: bool = True) -> dict[int, dict[str, int]]:
    """{link id: {"clicks", "unique_visitors", "bot_clicks"}} for list pages, all time: the
    stats' own totals (analytics.selectors.links_totals, from the hourly roll-ups and the
    per-visitor table), so the list, the dashboard and the compat layers say what the stats
    say, and purging old visits changes none of them. Links without clicks get zeros.

    `unique_visitors` counts distinct people over all their visits (someone coming back another
    hour or day counts once), in a few queries whatever the number of visits; `people=False`
    skips them for a caller that shows only clicks ("unique_visitors" stays 0): one query.
    """
    if _click_totals_reader is None:
        raise ImproperlyConfigured("link_click_totals needs the analytics app installed.")
    return _click_totals_reader(
        link_ids=link_ids, start=ALL_TIME_START, end=timezone.now(), people=people
    )


# Before any hour a link could have clicks in: "all time" for link_click_totals.
ALL_TIME_START = datetime(2000, 1, 1, tzinfo=UTC)


# The rankings of link_ranking (YOURLS's `stats` filters): key → ORDER BY.
LINK_RANKINGS = {
    "top": ("-total_clicks", "-created_at", "-id"),
    "bottom": ("total_clicks", "created_at", "id"),
    "last": ("-created_at", "-id"),
    "rand": ("?",),
}


def link_ranking(
    *,
    user: AbstractBaseUser,
    by: str = "top",
    limit: int = 10,
    offset: int = 0,
    workspace_id: int | None = None,
) -> list[UrlLink]:
    """Links `user` may see (staff: every link; archived and stopped ones too), each with
    `total_clicks` (people's, all time): the most clicked (`top`), the least (`bottom`), the
    newest (`last`) or a random few (`rand`); `limit` of them from `offset` on.
    `workspace_id`: one workspace's only (an API key acts for one)."""
    links = UrlLink.objects.visible_to(user)
    if workspace_id is not None:
        links = links.filter(workspace_id=workspace_id)
    links = links.select_related("domain").with_total_clicks().order_by(*LINK_RANKINGS[by])
    return list(links[offset : offset + limit])


def link_totals(*, user: AbstractBaseUser, workspace_id: int | None = None) -> dict[str, int]:
    """{"links", "clicks"}: how many links `user` may see (staff: all; archived and stopped ones
    too; `workspace_id`: of that workspace only) and their people's clicks, all time, in two
    queries."""
    links = UrlLink.objects.visible_to(user).order_by()
    if workspace_id is not None:
        links = links.filter(workspace_id=workspace_id)
    return {"links": links.count(), "clicks": link_click_sum(links=links)["clicks"]}


def link_click_sum(*, links: QuerySet[UrlLink]) -> dict[str, int]:
    """All-time {"clicks", "bot_clicks"} summed over a set of links (link_list's, say), in one
    query whatever its size (the Shlink layer's visits overview)."""
    sums = links.order_by().aggregate(
        clicks=Sum("hourly_clicks__clicks"), bot_clicks=Sum("hourly_clicks__bot_clicks")
    )
    return {"clicks": sums["clicks"] or 0, "bot_clicks": sums["bot_clicks"] or 0}


def link_tag_names(*, link_ids: list[int]) -> dict[int, list[str]]:
    """{link id: its tag names, A–Z} for a page of links, in one query (none for no links)."""
    names: dict[int, list[str]] = {pk: [] for pk in link_ids}
    if not link_ids:
        return names
    rows = (
        UrlLink.tags.through.objects.filter(urllink_id__in=link_ids)
        .order_by("tag__key")
        .values_list("urllink_id", "tag__name")
    )
    for link_id, name in rows:
        names[link_id].append(name)
    return names


EXPORT_BATCH = 1000


def link_export_rows(
    *,
    user: AbstractBaseUser,
    everyone: bool = False,
    batch_size: int = EXPORT_BATCH,
    workspace_id: int | None = None,
    request: HttpRequest | None = None,
    base: str = "",
) -> Iterator[dict]:
    """Every link of `user`, oldest first, as the export's records: code, short_url, long_url,
    title, tags (names, A–Z), domain (host; the default one's too), created_at, valid_since,
    expires_at, status, archived, clicks and unique_visitors (all time, people only), og_title,
    og_description and og_image (the social preview). Archived,
    scheduled, expired and revoked links included.

    Short URLs and the default domain's host as links.shortlinks makes them: from
    SHORT_URL_BASE, else the page's `request`, else `base` (manage.py export_links --base);
    with none of them, site-relative paths and an empty domain.

    The links of one workspace (`workspace_id`, resolved by the caller, who checks membership;
    default: `user`'s personal workspace). `everyone=True`: every workspace's links, for staff
    only (PermissionDenied otherwise). Read in pages of `batch_size`
    links with their totals and tags in bulk: four queries a page, not one per link, and memory
    stays flat however many links there are. A workspace's export stops at the next page once
    `user` is no longer a member (a long download of a team they are removed from meanwhile,
    whose links made after the removal it would otherwise carry on to).
    """
    links = UrlLink.objects.select_related("domain").order_by("id")
    still_member = None
    if everyone:
        if not user.is_staff:
            raise PermissionDenied("Only staff can export every owner's links.")
        links = links.select_related("owner")
    else:
        # The personal workspace through a join: no query of its own.
        links = (
            links.filter(workspace_id=workspace_id)
            if workspace_id is not None
            else links.filter(workspace__personal_for_id=user.pk)
        )
        if workspace_id is not None and not user.is_staff:

            def still_member() -> bool:
                return role_in(user=user, workspace_id=workspace_id) is not None

    return _export_pages(
        links,
        with_owner=everyone,
        batch_size=batch_size,
        still_member=still_member,
        request=request,
        base=base,
    )


def _export_pages(
    links: QuerySet[UrlLink],
    *,
    with_owner: bool,
    batch_size: int,
    still_member: Callable[[], bool] | None = None,
    request: HttpRequest | None = None,
    base: str = "",
) -> Iterator[dict]:
    default_host = default_domain_host(request.get_host() if request else "", base=base)
    last_id = 0
    while True:
        if last_id and still_member is not None and not still_member():
            return  # removed from the workspace during the download
        page = list(links.filter(id__gt=last_id)[:batch_size])
        if not page:
            return
        ids = [link.pk for link in page]
        totals = link_click_totals(link_ids=ids)
        tags = link_tag_names(link_ids=ids)
        statuses = link_statuses(page)
        for link in page:
            record = {
                "code": link.code,
                "short_url": link_short_url(link, request=request, base=base),
                "long_url": link.long_url,
                "title": link.title,
                "tags": tags[link.pk],
                "domain": link.domain_host or default_host,
                "created_at": link.created_at,
                "valid_since": link.valid_since,
                "expires_at": link.shown_expiry,
                "status": str(statuses[link.pk]),
                "archived": link.archived,
                "clicks": totals[link.pk]["clicks"],
                "unique_visitors": totals[link.pk]["unique_visitors"],
                "og_title": link.og_title,
                "og_description": link.og_description,
                "og_image": link.og_image,
                "expired_url": link.expired_url,
                "ios_url": link.ios_url,
                "android_url": link.android_url,
                "fallback_url": link.fallback_url,
                "health": link.health_status,
                "track_conversions": link.track_conversions,
            }
            if with_owner:
                record["owner"] = link.owner.get_username()
            yield record
        last_id = page[-1].pk


def tag_list(*, user: AbstractBaseUser, workspace_id: int | None = None) -> QuerySet[Tag]:
    """A workspace's tags (default: the user's personal workspace's), A–Z, each with
    `link_count` (all its links carrying it, archived and stopped ones included) and
    `archived_count` (those of them archived, which My links hides unless asked). The caller
    has checked membership (workspaces.selectors.workspace_get)."""
    workspace_id = workspace_id_or_personal(user=user, workspace_id=workspace_id)
    tags = Tag.objects.filter(workspace_id=workspace_id)
    return tags.annotate(
        link_count=Count("links"), archived_count=Count("links", filter=Q(links__archived=True))
    ).order_by("key")


def tag_get(*, user: AbstractBaseUser, name: str, workspace_id: int | None = None) -> Tag:
    """The workspace's tag of that name (any case; default: the user's personal workspace),
    else TagNotFound."""
    workspace_id = workspace_id_or_personal(user=user, workspace_id=workspace_id)
    try:
        return Tag.objects.get(workspace_id=workspace_id, key=tag_key(name))
    except Tag.DoesNotExist:
        raise TagNotFound(name) from None


def domain_list() -> QuerySet[Domain]:
    """Every short domain, the default first, then A–Z."""
    return Domain.objects.order_by("host")


# Who may see every domain and where its bare root and unknown codes send people: those who
# may change them (staff with the admin's permission; superusers).
DOMAIN_MANAGE_PERMISSION = "links.change_domain"


def domains_managed_by(user: AbstractBaseUser) -> bool:
    """Staff with the permission to change domains, as the admin asks: the permission alone (a
    group can hand it to anyone) does not make a marketer a domain keeper."""
    return bool(getattr(user, "is_staff", False)) and user.has_perm(DOMAIN_MANAGE_PERMISSION)


def domain_list_for(*, user: AbstractBaseUser, workspace_id: int | None = None) -> QuerySet[Domain]:
    """The short domains `user` may put links on, as domain_list orders them: the default, those
    open to every workspace, and those kept for a workspace they belong to (`workspace_id`: that
    one only, as for an API key pinned to it). Those who manage domains see every one unless a
    workspace is named. A domain kept for another workspace is its business, not listed."""
    domains = domain_list()
    if workspace_id is None and domains_managed_by(user):
        return domains
    if workspace_id is not None:
        usable = Q(workspace_id=workspace_id)
    else:
        usable = Q(workspace_id__in=workspace_ids_of(user))
    return domains.filter(usable | Q(workspace__isnull=True) | Q(pk=DEFAULT_DOMAIN_ID))


def default_domain_host(request_host: str = "", *, base: str = "") -> str:
    """The default domain's host as people see it: SHORT_URL_BASE's, else the request's (as
    links.shortlinks.short_url_for makes its short URLs; `base` stands for SHORT_URL_BASE as
    there)."""
    base = base or settings.SHORT_URL_BASE
    if base:
        return hostname_of(urlsplit(base).netloc)
    return hostname_of(request_host)


def default_domain_authority(request_host: str = "") -> str:
    """The default domain as a browser reaches it: default_domain_host with the port, when
    there is one (SHORT_URL_BASE's, else the request's Host: `127.0.0.1:8000` under `make
    run`). What a client that calls the domain itself is told (the Shlink layer's domains)."""
    base = urlsplit(settings.SHORT_URL_BASE).netloc if settings.SHORT_URL_BASE else request_host
    name, port = split_domain_port(base.rpartition("@")[2].lower())
    return f"{name}:{port}" if port else name


def domain_id_for_name(name: str, *, request_host: str = "") -> int | None:
    """The domain a host names (any spelling host_form reads, as the domain was added): an
    extra domain's id, the default domain's for "" or its own host (default_domain_host, or a
    host the redirect serves it on: links.domains.DomainTable.names_default), None for a host
    that is no domain of ours."""
    host = host_form(name)
    if not host or host == default_domain_host(request_host):
        return DEFAULT_DOMAIN_ID
    # The redirect's table of domains (in memory, current after any domain change): a bulk
    # call naming a domain in each of its 1,000 items makes no query for it.
    table = current_table()
    route = table.by_host.get(host)
    if route is not None:
        return route.id
    # An export's own default host (no request to compare with: manage.py import_links).
    return DEFAULT_DOMAIN_ID if table.names_default(host) else None


def link_import_list(*, user: AbstractBaseUser, limit: int = 10) -> list[LinkImport]:
    """The user's latest uploads on the import page, newest first (their files left out)."""
    return list(LinkImport.objects.filter(owner=user).defer("data", "report")[:limit])


def link_import_get(*, user: AbstractBaseUser, import_id: int) -> LinkImport:
    """One of the user's uploads with its report; LinkImport.DoesNotExist for anyone else's
    (staff included: an upload is its owner's business)."""
    return LinkImport.objects.defer("data").get(pk=import_id, owner=user)


def link_imports_waiting() -> bool:
    """Whether any upload waits for its background run."""
    return LinkImport.objects.filter(status=ImportStatus.QUEUED).exists()


def link_recent_checks(*, link: UrlLink, limit: int = 10) -> list[LinkCheck]:
    """The health checker's latest checks of the link's destinations, newest first."""
    return list(LinkCheck.objects.filter(link=link).order_by("-checked_at", "-id")[:limit])
