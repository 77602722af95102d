"""Tells the operator at start-up when people's time zones cannot be used."""

from django.core.checks import Error, Warning, register
from django.db import connection
from django.db.utils import DatabaseError


@register("database")
def time_zone_tables(app_configs, **kwargs):
    if connection.vendor != "mysql":
        return []
    try:
        loaded = connection.features.has_zoneinfo_database
    except DatabaseError:
        return []  # the database checks report an unreachable database
    if loaded:
        return []
    return [
        Warning(
            "MySQL/MariaDB has no time zone tables: every page shows times in TIME_ZONE, "
            "whatever zone people choose.",
            hint="Load them: mariadb-tzinfo-to-sql /usr/share/zoneinfo | mariadb -u root mysql "
            "(MySQL: mysql_tzinfo_to_sql), then restart the web processes.",
            id="accounts.W001",
        )
    ]


@register("security")
def sign_in_settings(app_configs, **kwargs):
    """Single sign-on settings that cannot work, said at start-up rather than at the first
    sign-in (docs/sso.md)."""
    from django.conf import settings

    from accounts.sso import enabled
    from workspaces.models import Role

    problems = []
    if not settings.LOCAL_PASSWORDS and not enabled():
        problems.append(
            Error(
                "LOCAL_PASSWORDS is off but single sign-on is not set up: nobody could sign in.",
                hint="Set SSO_ISSUER, SSO_CLIENT_ID and SSO_CLIENT_SECRET, or LOCAL_PASSWORDS=1.",
                id="accounts.E002",
            )
        )
    if enabled() and not settings.SSO_CLIENT_ID:
        problems.append(
            Error(
                "SSO_ISSUER is set without SSO_CLIENT_ID.",
                hint="Register shorturl with the provider (redirect URI "
                "https://<your host>/accounts/sso/callback/) and set the client's id and secret.",
                id="accounts.E003",
            )
        )
    if enabled() and settings.SSO_DEFAULT_ROLE not in Role.values:
        problems.append(
            Error(
                f"SSO_DEFAULT_ROLE={settings.SSO_DEFAULT_ROLE!r} is not a role.",
                hint=f"One of {', '.join(Role.values)}.",
                id="accounts.E004",
            )
        )
    return problems


@register("database")
def sso_default_workspace(app_configs, **kwargs):
    from django.conf import settings

    from accounts.sso import enabled
    from workspaces.models import Workspace

    slug = settings.SSO_DEFAULT_WORKSPACE
    if not (enabled() and slug):
        return []
    try:
        found = Workspace.objects.filter(slug=slug).exists()
    except DatabaseError:
        return []
    if found:
        return []
    return [
        Warning(
            f"SSO_DEFAULT_WORKSPACE={slug!r}: no such workspace, so people who sign in through "
            "the provider join none.",
            hint="Create it (the web UI's Workspaces page) or correct the slug.",
            id="accounts.W002",
        )
    ]
