from django.db import migrations, models


class Migration(migrations.Migration):
    """The (link, visit_time) index of the visits grows into a covering one, (link, visit_time,
    id, is_bot, client_id): a day's or week's distinct people are counted from the index alone,
    exact at any size, and the latest visits and the export still read it in (visit_time, id)
    order. Widened in place of a fifth index: a visit's INSERT still writes four
    (docs/performance.md, Stats). The new index is built before the old one goes, so the link's
    foreign key always has one."""

    dependencies = [
        ("analytics", "0006_visit_channel"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="visitrecord",
            index=models.Index(
                fields=["link", "visit_time", "id", "is_bot", "client_id"],
                name="visit_link_time_people",
            ),
        ),
        migrations.RemoveIndex(model_name="visitrecord", name="visit_link_time"),
    ]
