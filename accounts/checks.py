"""Tells the operator at start-up when people's time zones cannot be used."""

from django.core.checks import Warning, register
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
