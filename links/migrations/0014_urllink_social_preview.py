# Social previews per link (issue #28): the Open Graph title, description and image a
# link-preview fetcher is shown instead of the redirect. Database defaults too, so that code
# that predates the columns (a process during a rolling upgrade) can still insert rows.
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("links", "0013_link_workspace_url_hash"),
    ]

    operations = [
        migrations.AddField(
            model_name="urllink",
            name="og_title",
            field=models.CharField(
                blank=True, db_default="", default="", max_length=200, verbose_name="preview title"
            ),
        ),
        migrations.AddField(
            model_name="urllink",
            name="og_description",
            field=models.CharField(
                blank=True,
                db_default="",
                default="",
                max_length=500,
                verbose_name="preview description",
            ),
        ),
        migrations.AddField(
            model_name="urllink",
            name="og_image",
            field=models.CharField(
                blank=True,
                db_default="",
                default="",
                max_length=2048,
                verbose_name="preview image URL",
            ),
        ),
    ]
