"""Where a visit went: the URL a link's rule or variant sent the visitor to, "" for the long URL
(links/gates.py). Visits stored before went to their link's long URL (links had no rules yet):
the column's default says so, and the roll-up gets the matching "destinations" rows, one per
(link, hour or day) with the people's clicks of that period, from its "devices" sums (every
visit has a device type), as 0006 did for channels. Written against the historical models only.

Follows 0007 (the covering index)."""

from django.db import migrations, models
from django.db.models import Sum

# The roll-up's dimension names and the long URL's value at the time of this migration.
DEVICES, DESTINATIONS, LONG_URL = "devices", "destinations", ""
CHUNK = 1000


def carry_over_destinations(apps, schema_editor):
    for model_name, period in (("HourlyBreakdown", "hour"), ("DailyBreakdown", "day")):
        model = apps.get_model("analytics", model_name)
        model.objects.filter(dimension=DESTINATIONS).delete()  # a re-run writes them again
        sums = (
            model.objects.filter(dimension=DEVICES)
            .values("link_id", period)
            .annotate(clicks_sum=Sum("clicks"))
            .order_by()
        )
        model.objects.bulk_create(
            (
                model(
                    link_id=row["link_id"],
                    dimension=DESTINATIONS,
                    value=LONG_URL,
                    code="",
                    clicks=row["clicks_sum"],
                    **{period: row[period]},
                )
                for row in sums.iterator(chunk_size=CHUNK)
            ),
            batch_size=CHUNK,
        )


def drop_destinations(apps, schema_editor):
    for model_name in ("HourlyBreakdown", "DailyBreakdown"):
        apps.get_model("analytics", model_name).objects.filter(dimension=DESTINATIONS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("analytics", "0007_visit_link_time_people"),
    ]

    operations = [
        migrations.AddField(
            model_name="visitrecord",
            name="destination",
            field=models.CharField(blank=True, db_default="", default="", max_length=2048),
        ),
        migrations.RunPython(carry_over_destinations, drop_destinations),
    ]
