"""An API key acts for one workspace (#16): keys made before act for their user's personal
workspace, which holds every link they had (links 0010)."""

import django.db.models.deletion
from django.db import migrations, models

from workspaces.migration_helpers import move_rows_into_personal_workspaces


def into_personal_workspaces(apps, schema_editor):
    move_rows_into_personal_workspaces(apps, "accounts", "ApiKey", "user_id")


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_api_key_scopes_and_expiry"),
        ("workspaces", "0002_personal_workspaces"),
    ]

    operations = [
        migrations.AddField(
            model_name="apikey",
            name="workspace",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="api_keys",
                to="workspaces.workspace",
            ),
        ),
        migrations.RunPython(into_personal_workspaces, migrations.RunPython.noop),
    ]
