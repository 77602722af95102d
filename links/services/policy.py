"""What may be stored in a link and when a link may change: the rules every entry point shares."""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Iterable
from datetime import datetime
from urllib.parse import SplitResult, urlsplit

import idna
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db.models.functions import Lower
from django.http.request import split_domain_port
from django.utils import timezone

from core.errors import Conflict
from links.cache import host_to_ascii, redirect_location
from links.codes.aliases import ALIAS_MAX_LENGTH, validate_alias
from links.domains import current_table
from links.models import DEFAULT_DOMAIN_ID, CodeType, RedirectType, UrlLink

_url_validator = URLValidator(schemes=["http", "https"])

# The code of the long-URL refusal for a URL that points back at this service (a redirect loop);
# the others are "invalid".
LOOP = "loop"


class LinkRevoked(Conflict):
    """A revoked link is final: it cannot be changed (the API answers 409)."""

    def __init__(self, code: str):
        super().__init__(f"{code} was revoked and can no longer be changed.")
        self.code = code


def is_storable_text(value: str) -> bool:
    """False for text no database encoding takes: a lone surrogate, which a JSON "\\ud800"
    escape decodes to, and a NUL (PostgreSQL refuses it, C strings end at it). DRF's fields
    refuse both before the API calls a service; other callers (file imports, the admin,
    scripts) reach the rules here only (links/tests/test_fuzz.py, test_import_limits.py)."""
    if "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# A web address typed without its scheme: a host of two or more dot-separated labels (a name or
# an IPv4 address), maybe a port, then a path, query or fragment, no spaces. Nothing with a
# scheme, a user name (`user@example.com` is an e-mail address) or a bracketed IPv6 host. Each
# label ends at a dot, so the match is linear in the text's length: a host pattern whose parts
# may each take a dot backtracks quadratically (30 s on 40 KB of "a.a.a.…" and a space).
_HOST_LABEL = r"[^\s/?#@:\[\].]+"
_SCHEMELESS = re.compile(rf"{_HOST_LABEL}(?:\.{_HOST_LABEL})+\.?(?::\d{{1,5}})?(?:[/?#]\S*)?\Z")


def with_default_scheme(text: str) -> str:
    """`example.com/page` as `https://example.com/page`: people (and CSV files) leave the scheme
    out. Only a bare host or host/path gets one; any text with a scheme (a full URL stays exactly
    as sent, `mailto:…` stays refused) or that is not a host is returned as it is."""
    return "https://" + text if _SCHEMELESS.match(text) else text


def url_hash(long_url: str) -> str:
    return hashlib.sha1(long_url.encode(), usedforsecurity=False).hexdigest()


def _host_matches(host: str, domains: list[str]) -> bool:
    """Whether `host` is one of `domains` or under one; both as _comparable_host gives them."""
    return any(host == domain or host.endswith("." + domain) for domain in domains)


def _ip_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    if not (host[-1:].isdigit() or ":" in host):  # a name: skip the costly failed parse
        return None
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _comparable_host(host: str) -> str:
    """A host as hosts are compared: an IP address in its standard form, a name in lowercase
    ASCII (IDNA) without the final dot, so that every spelling of one host is one string."""
    host = host.strip().removeprefix("[").removesuffix("]").rstrip(".").lower()
    if not host.isascii():
        try:
            return host_to_ascii(host)
        except idna.IDNAError:
            return host
    address = _ip_address(host)
    return host if address is None else str(address)


_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")  # ::a.b.c.d (RFC 4291, deprecated)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # the well-known prefix (RFC 6052)


def embedded_ipv4(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries, in every standard form that leads to it:
    IPv4-mapped (::ffff:127.0.0.1), IPv4-compatible (::127.0.0.1), 6to4 (2002:7f00:1::, RFC
    3056: the sender's own stack sends it to the IPv4 address), Teredo's client, NAT64's
    well-known prefix (64:ff9b::7f00:1). None for an IPv4 address and any other IPv6 one.

    The one rule both the link policy (is_local_address) and the webhook targets
    (webhooks.targets) judge such an address by: a check that knows only the mapped form lets
    the others through (the audit's 6to4 webhook target embedding 127.0.0.1)."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64 or (address in _IPV4_COMPATIBLE and int(address) > 1):  # not ::, ::1
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _comparable_domains(entries: Iterable[str]) -> list[str]:
    """A blocked or allowed domains setting's entries as _comparable_host gives them."""
    return [domain for entry in entries if (domain := _comparable_host(entry.strip().lstrip(".")))]


def _is_this_machine(host: str) -> bool:
    """localhost (and every *.localhost, RFC 6761), loopback and unspecified addresses, also as
    an IPv6 address carrying one (embedded_ipv4); `host` as _comparable_host gives it."""
    address = _ip_address(host)
    if address is None:
        return host == "localhost" or host.endswith(".localhost")
    if address.is_loopback or address.is_unspecified:
        return True
    inner = embedded_ipv4(address)
    return inner is not None and (inner.is_loopback or inner.is_unspecified)


def own_hosts(request_host: str | None = None) -> set[str]:
    """The names this service answers to, comparable (_comparable_host): SHORT_URL_BASE's host,
    the host the request came to, the ALLOWED_HOSTS entries and the extra short domains (on the
    ports own_ports gives).

    An ALLOWED_HOSTS entry `.example.com` counts as example.com itself, not as every
    subdomain: a shortener at go.example.com commonly allows `.example.com`, and its marketers'
    links to www.example.com are the product's whole point. "*" names no host.
    """
    names = [urlsplit(settings.SHORT_URL_BASE).hostname or ""] if settings.SHORT_URL_BASE else []
    if request_host:
        names.append(split_domain_port(request_host)[0])
    names += [entry.removeprefix(".") for entry in settings.ALLOWED_HOSTS if entry != "*"]
    names += current_table().by_host  # the extra short domains (links.domains)
    return {_comparable_host(name) for name in names if name} - {""}


_DEFAULT_PORTS = {"http": 80, "https": 443}


def url_port(parts: SplitResult) -> int | None:
    """The port a URL reaches: the one it names, else its scheme's default (None for a scheme
    without one)."""
    return parts.port or _DEFAULT_PORTS.get(parts.scheme.lower())


def own_ports(request_host: str | None = None) -> set[int]:
    """The ports this service is reached on: SHORT_URL_BASE's and the request's (each the
    scheme's default when it names none), and always 80 and 443: a proxy in front commonly
    serves both, http:// answering with a redirect to https://, so either spelling of an own
    host without a port leads back here. Another port on one of its hosts is another server
    (a developer's app on 127.0.0.1:9999 beside this one on :8000)."""
    ports = set(_DEFAULT_PORTS.values())
    if settings.SHORT_URL_BASE:
        try:
            port = url_port(urlsplit(settings.SHORT_URL_BASE))
        except ValueError:
            port = None
        if port:
            ports.add(port)
    if request_host:
        port = split_domain_port(request_host)[1]
        if port.isdigit():
            ports.add(int(port))
    return ports


def points_back_here(host: str, port: int | None, own: set[str], ports: set[int]) -> bool:
    """Whether a link to `host`:`port` would lead back to this service: any spelling of one of
    its own hosts (own_hosts) on one of its ports (own_ports). Every short link of ours is on
    one of those, so two links can never point at each other. When the service answers on a
    local name (localhost, 127.0.0.1), every local name is one of its hosts: they all reach
    this machine."""
    if port not in ports:
        return False
    host = _comparable_host(host)
    return host in own or (_is_this_machine(host) and any(_is_this_machine(h) for h in own))


def is_local_address(host: str) -> bool:
    """localhost, loopback and unspecified addresses: a visitor's browser would look for them on
    the visitor's own device, never on the server the link was made on."""
    return _is_this_machine(_comparable_host(host))


def _needs_idna(host: str) -> bool:
    """Non-ASCII names and `xn--` labels: the ones IDNA turns into, or checks as, A-labels.

    Other ASCII names go into the Location header as they are, and stay allowed even where
    IDNA's registration rules would not (`r3---sn-abc.googlevideo.com` has hyphens in the 3rd
    and 4th place, which browsers accept too).
    """
    return not host.isascii() or any(label.startswith("xn--") for label in host.split("."))


class LongUrlRules:
    """The long-URL rules with their settings read once: a bulk call checks many URLs with one.

    `check(long_url)` returns the URL to store, or raises ValidationError({"long_url": [reason]}).
    """

    def __init__(self, *, request_host: str | None = None, also_own: Iterable[str] = ()):
        """`also_own`: more hosts to count as this service's (a short domain being added, not
        in the domain table yet)."""
        self.max_length = settings.SHORTURL_MAX_URL_LENGTH
        self.own_hosts = own_hosts(request_host) | {_comparable_host(name) for name in also_own}
        self.own_ports = own_ports(request_host)
        # The lists' entries as hosts are compared (`.example.com` is example.com and under it),
        # so that `bücher.example` and `xn--bcher-kva.example` are one entry, either way round.
        self.blocked = _comparable_domains(settings.SHORTURL_BLOCKED_DOMAINS)
        self.allowed_names = settings.SHORTURL_ALLOWED_DOMAINS
        self.allowed = _comparable_domains(self.allowed_names)

    def check(self, long_url: str) -> str:
        def refuse(message: str, code: str = "invalid") -> ValidationError:
            # The code tells programs what kind of refusal it is (YOURLS's API answers a loop
            # with its own error code).
            return ValidationError({"long_url": [ValidationError(message, code=code)]})

        long_url = (long_url or "").strip()
        if not long_url:
            raise refuse("Enter the long URL to shorten.")
        if not is_storable_text(long_url):
            raise refuse("This is not a valid URL.")
        long_url = with_default_scheme(long_url)
        if len(long_url) > self.max_length:
            raise refuse(
                f"URLs can be at most {self.max_length} characters (this one has {len(long_url)})."
            )
        try:
            parts = urlsplit(long_url)
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number
        except ValueError:
            raise refuse("This is not a valid URL.") from None
        if not parts.scheme or (
            "://" not in long_url and any(character.isspace() for character in long_url)
        ):
            # Words, or a name without a dot (with_default_scheme adds https:// only to a host).
            raise refuse(
                f"“{long_url[:80]}” is not a web address; paste one that starts with https://, "
                "e.g. https://example.com/page."
            )
        if parts.scheme.lower() not in ("http", "https"):
            raise refuse("Only http and https URLs can be shortened.")
        host = parts.hostname
        if not host:
            raise refuse("The URL needs a host name, e.g. https://example.com/page.")
        host = host.lower()
        if points_back_here(host, url_port(parts), self.own_hosts, self.own_ports):
            raise refuse(
                "This URL points back at this short-link service; "
                "shortening it would make a redirect loop.",
                code=LOOP,
            )
        if is_local_address(host):
            # Kept apart from the loop: another app on this machine is not a short link.
            raise refuse(
                f"This URL points at a local address ({host}) that visitors cannot reach: "
                "on their devices it means their own machine."
            )
        try:
            _url_validator(long_url)
        except ValidationError:
            raise refuse("This is not a valid URL.") from None
        if _needs_idna(host):
            try:
                host_to_ascii(host)
            except idna.IDNAError as error:
                raise refuse(
                    f"The host name “{host}” is not a valid internationalised domain name "
                    f"({error})."
                ) from None
        if self.blocked or self.allowed:
            comparable = _comparable_host(host)
            if self.blocked and _host_matches(comparable, self.blocked):
                raise refuse(f"Links to {host} are not allowed.")
            if self.allowed and not _host_matches(comparable, self.allowed):
                raise refuse(f"Only links to {', '.join(self.allowed_names)} are allowed.")
        # What the redirect sends (and proxies limit) is the encoded Location, not the text: an
        # emoji is one character here and twelve there.
        location_length = len(redirect_location(long_url))
        if location_length > self.max_length:
            raise refuse(
                f"URLs can be at most {self.max_length} characters (this one has "
                f"{location_length:,} once its non-ASCII characters are percent-encoded)."
            )
        return long_url


def validate_long_url(long_url: str, *, request_host: str | None = None) -> str:
    """Return the URL to store, or raise ValidationError({"long_url": [reason]})."""
    return LongUrlRules(request_host=request_host).check(long_url)


def validate_optional_url(value: str | None, *, field: str, url_rules: LongUrlRules) -> str:
    """A URL a link may send visitors to besides its long URL (its fallback, expired_url; its
    failover, fallback_url, used while its destination is broken: links.services.health; an app
    link's web address): "" for none, else a URL the long-URL rules accept (the same policy as
    the long URL: scheme added, no loop, no local address, the lists), refused as
    ValidationError({field: [reason]})."""
    url = (value or "").strip()
    if not url:
        return ""
    try:
        return url_rules.check(url)
    except ValidationError as exc:
        raise ValidationError({field: exc.error_dict["long_url"]}) from None


_REDIRECT_TYPES = frozenset(RedirectType.values)


def validate_redirect_type(redirect_type: int) -> int:
    try:
        value = int(redirect_type)
    except (TypeError, ValueError):
        value = None
    if value not in _REDIRECT_TYPES:
        raise ValidationError({"redirect_type": ["Choose one of 301, 302, 307 or 308."]})
    return value


def validate_expiry(expires_at: datetime | None) -> datetime | None:
    if expires_at is None:
        return None
    if timezone.is_naive(expires_at):
        expires_at = timezone.make_aware(expires_at)
    if expires_at <= timezone.now():
        raise ValidationError({"expires_at": ["The expiry must be in the future."]})
    if expires_at.year > timezone.now().year + 100:
        # Also keeps clear of datetime's year 9999 limit once converted to UTC.
        raise ValidationError(
            {"expires_at": ["Choose an expiry within 100 years, or leave it empty."]}
        )
    return expires_at


# The earliest start taken: a start before it says nothing a link could act on (and MySQL's
# zero date, 0000-00-00, comes in from old exports as year 1).
_EARLIEST_START_YEAR = 1971


def years_a_moment_may_have() -> tuple[int, int]:
    """The years a date a person sets may fall in (a link's start, a rule's before/after): from
    1971 to a hundred years ahead. Checked on the year as given, before any conversion: year 1
    or 9999 in a far time zone would overflow datetime's range once converted to UTC."""
    return _EARLIEST_START_YEAR, timezone.now().year + 100


def validate_start(valid_since: datetime | None) -> datetime | None:
    """A link's start (valid_since): before it the link is scheduled (links.models.LinkStatus),
    not live yet. A start already past is taken (the link is live at once, as Shlink takes
    one); the order against the expiry is validate_schedule's."""
    if valid_since is None:
        return None
    if timezone.is_naive(valid_since):
        valid_since = timezone.make_aware(valid_since)
    earliest, latest = years_a_moment_may_have()
    if not earliest <= valid_since.year <= latest:
        raise ValidationError(
            {"valid_since": [f"Choose a start between {earliest} and {latest}, or leave it empty."]}
        )
    return valid_since


def _shown_time(moment: datetime) -> str:
    return f"{timezone.localtime(moment):%Y-%m-%d %H:%M %Z}"


def validate_schedule(
    valid_since: datetime | None, expires_at: datetime | None, *, field: str = "valid_since"
) -> None:
    """A link starts before it expires (a start at or after the expiry would never let anyone
    through): else ValidationError on `field`, the one the caller changed."""
    if valid_since is None or expires_at is None or valid_since < expires_at:
        return
    if field == "expires_at":
        message = f"The expiry must be after the start ({_shown_time(valid_since)})."
    else:
        message = f"The start must be before the expiry ({_shown_time(expires_at)})."
    raise ValidationError({field: [message]})


_TITLE_MAX_LENGTH = UrlLink._meta.get_field("title").max_length


def validate_title(title: str | None) -> str:
    """The title to store (trimmed), or ValidationError({"title": [reason]})."""
    title = (title or "").strip()
    limit = _TITLE_MAX_LENGTH
    if len(title) > limit:
        raise ValidationError({"title": [f"Titles can be at most {limit} characters."]})
    if not is_storable_text(title):
        raise ValidationError({"title": ["This title holds characters that are not text."]})
    return title


_CASE_TWINS_NAMED = 3


def _case_twins(aliases: list[str], domain_id: int) -> dict[str, list[str]]:
    """{alias: existing aliases on the domain that differ from it only by case}, one query for
    them all.

    Aliases only: a generated code has a shape no alias may have. Lower() rather than iexact,
    which MySQL compares under the column's binary collation, i.e. case-sensitively.
    """
    folded = {alias.lower() for alias in aliases}
    if not folded:
        return {}
    by_fold: dict[str, list[str]] = {}
    rows = (
        UrlLink.objects.filter(code_type=CodeType.CUSTOM, domain_id=domain_id)
        .annotate(folded_code=Lower("code"))
        .filter(folded_code__in=folded)
        .order_by("code")
        .values_list("code", flat=True)
    )
    for code in rows:
        by_fold.setdefault(code.lower(), []).append(code)
    return {
        alias: [code for code in by_fold.get(alias.lower(), []) if code != alias][
            :_CASE_TWINS_NAMED
        ]
        for alias in aliases
    }


def alias_case_twins(alias: str, domain_id: int = DEFAULT_DOMAIN_ID) -> list[str]:
    """Existing aliases on the domain that differ from `alias` only by case (`spring-sale` for
    `Spring-Sale`): codes are case-sensitive, but people retype them from print or speech."""
    return _case_twins([alias], domain_id)[alias]


def _case_warning(alias: str, twins: list[str]) -> dict[str, list[str]]:
    if not twins:
        return {}
    existing = " and ".join(f"“{twin}”" for twin in twins)
    return {
        "alias": [
            f"“{alias}” differs from the existing {existing} only by upper and lower case: "
            "people typing it may end up on the other link."
        ]
    }


def alias_case_warnings(alias: str, domain_id: int = DEFAULT_DOMAIN_ID) -> dict[str, list[str]]:
    """{"alias": [warning]} when `alias` has case twins (alias_case_twins), else {}."""
    return _case_warning(alias, alias_case_twins(alias, domain_id))


def alias_case_warnings_many(
    aliases: list[str], domain_id: int = DEFAULT_DOMAIN_ID
) -> dict[str, dict[str, list[str]]]:
    """alias_case_warnings for each of `aliases` that has case twins (one query for them all,
    for a bulk call): {alias: {"alias": [warning]}}. Aliases made together count as existing
    for each other."""
    warnings = {}
    for alias, twins in _case_twins(aliases, domain_id).items():
        if twins:
            warnings[alias] = _case_warning(alias, twins)
    return warnings


_SUGGESTIONS_TRIED = 20


def _alias_candidates(alias: str) -> list[str]:
    """`alias-2`, `alias-3`, …, shortened to fit the alias length limit."""
    candidates = []
    for number in range(2, 2 + _SUGGESTIONS_TRIED):
        suffix = f"-{number}"
        candidate = alias[: ALIAS_MAX_LENGTH - len(suffix)].rstrip("-_") + suffix
        try:
            validate_alias(candidate)
        except ValidationError:
            continue
        candidates.append(candidate)
    return candidates


def free_alias_suggestions(
    aliases: list[str], domain_id: int = DEFAULT_DOMAIN_ID
) -> dict[str, str]:
    """For each alias taken on the domain, a free one like it (`spring-sale-2`), where one of
    the first few is free; one query for them all (a bulk call asks for many)."""
    candidates = {alias: _alias_candidates(alias) for alias in dict.fromkeys(aliases)}
    wanted = {candidate for options in candidates.values() for candidate in options}
    if not wanted:
        return {}
    taken = set(
        UrlLink.objects.filter(code__in=wanted, domain_id=domain_id).values_list("code", flat=True)
    )
    suggestions = {}
    for alias, options in candidates.items():
        free = next((option for option in options if option not in taken), None)
        if free is not None:
            suggestions[alias] = free
    return suggestions


ALIAS_TAKEN = "alias_taken"


def alias_taken_error(alias: str, *, suggestion: str | None = None) -> ValidationError:
    """The refusal of a taken alias, naming a free one (free_alias_suggestions) when there is."""
    if suggestion:
        message = f"The alias “{alias}” is already taken; “{suggestion}” is free."
    else:
        message = f"The alias “{alias}” is already taken; please choose another."
    # The code tells a taken alias from a malformed one (the Shlink layer answers each its way).
    return ValidationError({"alias": [ValidationError(message, code=ALIAS_TAKEN)]})


def ensure_changeable(link: UrlLink) -> None:
    if link.revoked_at is not None:
        raise LinkRevoked(link.code)
