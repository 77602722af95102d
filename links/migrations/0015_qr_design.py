# The QR designer (#28): a link's QR colours, error-correction level and centre logo.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("links", "0014_urllink_social_preview"),
    ]

    operations = [
        migrations.CreateModel(
            name="QrDesign",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("foreground", models.CharField(default="#000000", max_length=7)),
                ("background", models.CharField(default="#ffffff", max_length=7)),
                (
                    "error_level",
                    models.CharField(
                        choices=[
                            ("l", "L (7 % can be lost)"),
                            ("m", "M (15 %)"),
                            ("q", "Q (25 %)"),
                            ("h", "H (30 %)"),
                        ],
                        default="m",
                        max_length=1,
                    ),
                ),
                ("logo", models.FileField(blank=True, max_length=200, upload_to="qr-logos/")),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "link",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="qr_design",
                        to="links.urllink",
                    ),
                ),
            ],
            options={"verbose_name": "QR design"},
        ),
    ]
