"""Every user who exists now gets a personal workspace with them as its owner; new users get
theirs from a signal (workspaces.apps)."""

from django.conf import settings
from django.db import migrations

from workspaces.migration_helpers import personal_workspace_ids


def make_personal_workspaces(apps, schema_editor):
    personal_workspace_ids(apps)


class Migration(migrations.Migration):
    dependencies = [
        ("workspaces", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(make_personal_workspaces, migrations.RunPython.noop)]
