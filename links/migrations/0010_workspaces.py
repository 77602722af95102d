"""Links, tags and import uploads belong to a workspace (#16): each moves to its owner's personal
workspace (made by workspaces 0002). A short domain may be kept for one workspace."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from workspaces.migration_helpers import move_rows_into_personal_workspaces


def into_personal_workspaces(apps, schema_editor):
    for model_name in ("UrlLink", "Tag", "LinkImport"):
        move_rows_into_personal_workspaces(apps, "links", model_name, "owner_id")


class Migration(migrations.Migration):
    dependencies = [
        ("links", "0009_link_imports"),
        ("workspaces", "0002_personal_workspaces"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="domain",
            name="workspace",
            field=models.ForeignKey(
                blank=True,
                help_text="Only this workspace's links may use the domain; empty: every workspace's.",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="domains",
                to="workspaces.workspace",
            ),
        ),
        migrations.AddField(
            model_name="linkimport",
            name="workspace",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="link_imports",
                to="workspaces.workspace",
            ),
        ),
        migrations.AddField(
            model_name="tag",
            name="workspace",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="tags",
                to="workspaces.workspace",
            ),
        ),
        migrations.AddField(
            model_name="urllink",
            name="workspace",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="links",
                to="workspaces.workspace",
            ),
        ),
        migrations.RunPython(into_personal_workspaces, migrations.RunPython.noop),
        migrations.RemoveConstraint(
            model_name="tag",
            name="tag_owner_key",
        ),
        migrations.RemoveField(
            model_name="tag",
            name="owner",
        ),
        migrations.AlterField(
            model_name="linkimport",
            name="workspace",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="link_imports",
                to="workspaces.workspace",
            ),
        ),
        migrations.AlterField(
            model_name="tag",
            name="workspace",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="tags",
                to="workspaces.workspace",
            ),
        ),
        migrations.AlterField(
            model_name="urllink",
            name="workspace",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="links",
                to="workspaces.workspace",
            ),
        ),
        migrations.AddIndex(
            model_name="urllink",
            index=models.Index(fields=["workspace", "-created_at"], name="link_workspace_created"),
        ),
        migrations.AddConstraint(
            model_name="tag",
            constraint=models.UniqueConstraint(
                fields=("workspace", "key"), name="tag_workspace_key"
            ),
        ),
    ]
