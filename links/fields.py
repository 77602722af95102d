from django.db import models


class CaseSensitiveCharField(models.CharField):
    """A CharField compared byte for byte on every backend.

    MySQL's default collations fold case, so `aB3xY9k` and `Ab3xY9k` would collide on the
    unique index; SQLite and PostgreSQL already compare exactly.
    """

    def db_parameters(self, connection):
        params = super().db_parameters(connection)
        if connection.vendor == "mysql":
            params["collation"] = "utf8mb4_bin"
        return params
