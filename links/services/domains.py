"""Short domains: the extra hosts links are served on (staff add them), and which domain a create
request means."""

from __future__ import annotations

import re

import idna
from django.core.exceptions import ValidationError
from django.db import transaction

from audit.services import audit_change, snapshot
from links import domains as domain_table
from links.cache import host_to_ascii
from links.models import DEFAULT_DOMAIN_ID, HOST_MAX_LENGTH, Domain
from links.selectors import default_domain_host, domain_id_for_name
from links.services.app_links import validate_association
from links.services.policy import LOOP, LongUrlRules

# Labels of letters, digits and hyphens (after IDNA), at least two of them: a name a browser
# resolves, not an address or a bare word.
_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)\Z")
_REDIRECT_MAX_LENGTH = Domain._meta.get_field("root_redirect").max_length


def ensure_default_domain() -> None:
    """The default domain's row (links.models.DEFAULT_DOMAIN_ID): made by a migration, and again
    after a flush empties the table (tests), so that every link's default is there."""
    Domain.objects.get_or_create(id=DEFAULT_DOMAIN_ID, defaults={"host": ""})


def clean_host(value: str) -> str:
    """A domain's host as stored (domain_table.host_form: lowercase ASCII, no scheme, path or
    final dot; a pasted URL gives its host), or ValidationError({"host": [reason]}) for a
    port, a user name or anything that is no host name people can reach."""
    text = domain_table.host_part(value).rstrip(".")

    def refuse(message: str) -> ValidationError:
        return ValidationError({"host": [message]})

    if not text:
        raise refuse("Enter the domain's host name, e.g. go.example.com.")
    if ":" in text or "@" in text:
        raise refuse("Enter the host name alone, without a port or user name.")
    host = domain_table.host_form(text)
    if not host.isascii():  # host_form leaves a name IDNA refuses as it is: say why
        try:
            host_to_ascii(host)
        except idna.IDNAError as exc:
            raise refuse(f"“{text.lower()}” is not a valid host name ({exc}).") from None
    text = text.lower()
    labels = host.split(".")
    if len(host) > HOST_MAX_LENGTH or len(labels) < 2:
        raise refuse(f"“{text}” is not a host name people can reach, like go.example.com.")
    if not all(_LABEL.match(label) for label in labels) or labels[-1].isdigit():
        raise refuse(
            f"“{text}” is not a valid host name: use letters, digits and hyphens between dots."
        )
    return host


def clean_redirect(value: str, *, field: str, host: str, rules: LongUrlRules | None = None) -> str:
    """Where a domain sends its root or unknown codes: "" (nowhere: the 404 page) or a URL the
    long-URL rules accept (LongUrlRules: the scheme added to `example.com/page`, no local
    address, nothing on this service's own hosts, `host` included, which would send visitors
    round in a loop, the length limit and IDNA), refused as a link's long URL would be. The
    same for where its stopped links go (expired_redirect)."""
    url = (value or "").strip()
    if not url:
        return ""
    rules = rules or LongUrlRules(also_own=[host] if host else [])
    try:
        url = rules.check(url)
    except ValidationError as exc:
        problems = exc.error_dict["long_url"]
        if any(problem.code == LOOP for problem in problems):
            raise ValidationError(
                {field: ["This address is on this short-link service: visitors would loop."]}
            ) from None
        raise ValidationError({field: [m for p in problems for m in p.messages]}) from None
    if len(url) > _REDIRECT_MAX_LENGTH:
        raise ValidationError({field: [f"URLs can be at most {_REDIRECT_MAX_LENGTH} characters."]})
    return url


# domain_save's `workspace` when the caller leaves it as it is.
KEEP_WORKSPACE = object()


def domain_workspace_check(*, domain: Domain | None, workspace=KEEP_WORKSPACE) -> None:
    """ValidationError({"workspace": [reason]}) unless `domain` may be kept for `workspace` (a
    Workspace; None or KEEP_WORKSPACE: nothing to check): the default domain takes every
    workspace's links, and a domain already carrying other workspaces' links cannot be kept for
    one."""
    if workspace is KEEP_WORKSPACE or workspace is None or domain is None or not domain.pk:
        return
    if domain.pk == DEFAULT_DOMAIN_ID:
        raise ValidationError({"workspace": ["The default domain takes every workspace's links."]})
    others = domain.links.exclude(workspace_id=workspace.pk).count()
    if others:
        raise ValidationError(
            {
                "workspace": [
                    f"{others} link{'s' if others != 1 else ''} of other workspaces "
                    "use this domain; it cannot be kept for one workspace."
                ]
            }
        )


def domain_validate(
    *,
    domain: Domain | None = None,
    host: str,
    root_redirect: str = "",
    not_found_redirect: str = "",
    expired_redirect: str = "",
    apple_app_site_association: str = "",
    assetlinks: str = "",
) -> dict[str, str]:
    """The values domain_save would store for `domain` (None: a new one), or ValidationError
    with every field's problem. The default domain's host is SHORT_URL_BASE's and cannot be set
    (whatever `host` says), nor can its root (the site's home page) be sent elsewhere (a
    `root_redirect` for it is refused)."""
    errors: dict[str, list[str]] = {}
    pk = domain.pk if domain is not None else None
    if pk == DEFAULT_DOMAIN_ID:
        if (root_redirect or "").strip():
            errors["root_redirect"] = [
                "The default domain's root is the site's home page: it cannot be sent elsewhere."
            ]
        host, root_redirect = "", ""
    else:
        try:
            host = clean_host(host)
        except ValidationError as exc:
            errors.update(exc.message_dict)
        else:
            if host == default_domain_host():
                errors["host"] = [
                    f"{host} is the default domain (SHORT_URL_BASE) already: its links need "
                    "no domain of their own."
                ]
            elif Domain.objects.filter(host=host).exclude(pk=pk).exists():
                errors["host"] = [f"There is a domain {host} already."]
    values = {"host": host}
    rules = LongUrlRules(also_own=[host] if host else [])

    def redirect(value: str, *, field: str) -> str:
        return clean_redirect(value, field=field, host=host, rules=rules)

    checks = (
        ("root_redirect", root_redirect, redirect),
        ("not_found_redirect", not_found_redirect, redirect),
        ("expired_redirect", expired_redirect, redirect),
        ("apple_app_site_association", apple_app_site_association, validate_association),
        ("assetlinks", assetlinks, validate_association),
    )
    for field, value, clean in checks:
        try:
            values[field] = clean(value, field=field)
        except ValidationError as exc:
            errors.update(exc.message_dict)
    if errors:
        raise ValidationError(errors)
    return values


def domain_save(
    *,
    domain: Domain | None = None,
    host: str,
    root_redirect: str = "",
    not_found_redirect: str = "",
    workspace=KEEP_WORKSPACE,
    expired_redirect: str | None = None,
    apple_app_site_association: str | None = None,
    assetlinks: str | None = None,
) -> Domain:
    """Add a domain (`domain` None) or change one (domain_validate's rules); every process of
    every node serves the change from its next request. `workspace`: the one workspace whose
    links alone may use it (a Workspace, or None: every workspace's); left out, a new domain is
    every workspace's and a changed one keeps its own. The default domain is every
    workspace's, and a domain already carrying other workspaces' links cannot be kept for
    one. `expired_redirect`: where its stopped links (expired, revoked, limit reached) send
    visitors when they name no fallback of their own ("": the 410 page); None keeps it as it is
    (a new domain: none). `apple_app_site_association`, `assetlinks`: the app-association files
    it serves (links.services.app_links; "": none), None keeping each as it is."""
    kept = {
        "expired_redirect": expired_redirect,
        "apple_app_site_association": apple_app_site_association,
        "assetlinks": assetlinks,
    }
    for name, value in kept.items():
        if value is None:
            kept[name] = getattr(domain, name) if domain is not None else ""
    values = domain_validate(
        domain=domain,
        host=host,
        root_redirect=root_redirect,
        not_found_redirect=not_found_redirect,
        **kept,
    )
    domain_workspace_check(domain=domain, workspace=workspace)
    if workspace is not KEEP_WORKSPACE:
        values["workspace"] = workspace
    before = snapshot(domain) if domain is not None else None
    domain = domain or Domain()
    for field, value in values.items():
        setattr(domain, field, value)
    with transaction.atomic():
        domain.save()
        audit_change("domain.update" if before else "domain.create", domain, before=before)
        domain_table.domains_changed()
    return domain


def domain_delete(*, domain: Domain) -> None:
    """Remove a domain that has no links (a domain's links keep it: they would stop working)."""
    if domain.pk == DEFAULT_DOMAIN_ID:
        raise ValidationError({"host": ["The default domain cannot be removed."]})
    count = domain.links.count()
    if count:
        raise ValidationError(
            {"host": [f"{domain.host} still has {count} link{'s' if count != 1 else ''}."]}
        )
    with transaction.atomic():
        audit_change("domain.delete", domain, before=snapshot(domain), after={})
        domain.delete()
        domain_table.domains_changed()


def domain_for_create(
    name: str | None, *, request_host: str | None = None, workspace_id: int | None = None
) -> int:
    """The id of the domain a create request names (a host; empty or none: the default), or
    ValidationError({"domain": [reason]}). A domain kept for one workspace takes only that
    workspace's links (`workspace_id`: the link's)."""
    if not name:
        return DEFAULT_DOMAIN_ID
    if not isinstance(name, str):
        raise ValidationError({"domain": ["Name the domain by its host, as a string."]})
    domain_id = domain_id_for_name(name, request_host=request_host or "")
    if domain_id is None:
        # Only the ones this link could use: a domain kept for another workspace is its own.
        hosts = sorted(
            host
            for host, route in domain_table.current_table().by_host.items()
            if route.takes_links_of(workspace_id)
        )
        known = ", ".join(hosts[:10]) if hosts else "none yet"
        raise ValidationError(
            {"domain": [f"“{name[:100]}” is not one of this service's short domains ({known})."]}
        )
    route = domain_table.current_table().by_id.get(domain_id)
    if route is not None and not route.takes_links_of(workspace_id):
        raise ValidationError(
            {"domain": [f"The short domain {route.host} is kept for another workspace."]}
        )
    return domain_id
