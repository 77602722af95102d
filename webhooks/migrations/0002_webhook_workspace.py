"""A webhook hears one workspace's links (#16): each existing one its owner's personal
workspace's, which held all of the owner's links (links 0010)."""

import django.db.models.deletion
from django.db import migrations, models

from workspaces.migration_helpers import move_rows_into_personal_workspaces


def into_personal_workspaces(apps, schema_editor):
    move_rows_into_personal_workspaces(apps, "webhooks", "Webhook", "owner_id")


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0001_initial"),
        ("workspaces", "0002_personal_workspaces"),
    ]

    operations = [
        migrations.AddField(
            model_name="webhook",
            name="workspace",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="webhooks",
                to="workspaces.workspace",
            ),
        ),
        migrations.RunPython(into_personal_workspaces, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="webhook",
            name="workspace",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="webhooks",
                to="workspaces.workspace",
            ),
        ),
    ]
