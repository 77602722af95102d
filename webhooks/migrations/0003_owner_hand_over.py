"""A deleted user's team rows pass to another member (workspaces.deletion); no schema change."""

import workspaces.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('webhooks', '0002_webhook_workspace'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='webhook',
            name='owner',
            field=models.ForeignKey(on_delete=workspaces.deletion.hand_over_to_the_team, related_name='webhooks', to=settings.AUTH_USER_MODEL),
        ),
    ]
