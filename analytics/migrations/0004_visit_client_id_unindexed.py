from django.db import migrations, models


class Migration(migrations.Migration):
    """Visits' client_id loses its index: every insert paid a random B-tree write for it, and no
    read used it (docs/performance.md, Ingest)."""

    dependencies = [
        ("analytics", "0003_bot_name_and_kind"),
    ]

    operations = [
        migrations.AlterField(
            model_name="visitrecord",
            name="client_id",
            field=models.CharField(max_length=40),
        ),
    ]
