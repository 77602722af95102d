from django.db import migrations, models


class Migration(migrations.Migration):
    """A second covering index on the daily breakdown rows, ordered by value: long ranges are
    summed as they stream (docs/performance.md, Stats)."""

    dependencies = [
        ("analytics", "0004_visit_client_id_unindexed"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="dailybreakdown",
            index=models.Index(
                fields=["link", "dimension", "value", "code", "day", "clicks"],
                name="dailybreakdown_by_value",
            ),
        ),
    ]
