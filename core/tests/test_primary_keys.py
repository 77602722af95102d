"""Every table has a primary key (issue #31): MariaDB Galera certifies and applies rows by their
key; a table without one replicates badly (a full scan per row on every other node) or not at
all (wsrep_certify_nonPK off)."""

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def test_every_base_table_has_a_primary_key(requires_mysql):
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT t.table_name FROM information_schema.tables t
            WHERE t.table_schema = DATABASE() AND t.table_type = 'BASE TABLE'
              AND NOT EXISTS (
                SELECT 1 FROM information_schema.table_constraints c
                WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name
                  AND c.constraint_type = 'PRIMARY KEY')
            ORDER BY t.table_name
            """
        )
        without = [name for (name,) in cursor.fetchall()]
        cursor.execute(
            "SELECT COUNT(*) FROM information_schema.tables "
            "WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'"
        )
        (tables,) = cursor.fetchone()
    assert tables > 20  # the migrated schema, not an empty database
    assert without == []
