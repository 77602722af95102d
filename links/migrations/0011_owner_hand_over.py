"""A deleted user's team rows pass to another member (workspaces.deletion); no schema change."""

import workspaces.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('links', '0010_workspaces'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='linkimport',
            name='owner',
            field=models.ForeignKey(on_delete=workspaces.deletion.hand_over_to_the_team, related_name='link_imports', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AlterField(
            model_name='urllink',
            name='owner',
            field=models.ForeignKey(on_delete=workspaces.deletion.hand_over_to_the_team, related_name='links', to=settings.AUTH_USER_MODEL),
        ),
    ]
