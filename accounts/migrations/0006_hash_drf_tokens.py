"""DRF's tokens were kept in plain text (authtoken_token.key): each becomes a hashed API key
that acts as the token did (every scope, every workspace of its user), and the row is deleted.
The same `Authorization: Token <key>` keeps working."""

import hashlib

from django.db import migrations

NAME = "API token"  # accounts.services.DRF_TOKEN_NAME when this was written


def hash_tokens(apps, schema_editor):
    Token = apps.get_model("authtoken", "Token")
    ApiKey = apps.get_model("accounts", "ApiKey")
    scopes = ["links:read", "links:write", "stats:read", "webhooks:write"]
    tokens = list(Token.objects.all())
    if not tokens:
        return
    for token in tokens:
        # As accounts.services.api_key_hash: keys are random, a fast hash is enough.
        key_hash = hashlib.sha256(token.key.encode()).hexdigest()
        if ApiKey.objects.filter(key_hash=key_hash).exists():
            continue
        made = ApiKey.objects.create(
            user_id=token.user_id,
            name=NAME,
            prefix=token.key[:6],
            key_hash=key_hash,
            scopes=scopes,
            drf_token=True,
        )
        ApiKey.objects.filter(pk=made.pk).update(created_at=token.created)
    if schema_editor.connection.vendor == "sqlite":
        # SQLite leaves a deleted row's bytes in the file unless told to zero them.
        with schema_editor.connection.cursor() as cursor:
            cursor.execute("PRAGMA secure_delete = ON")
    Token.objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0005_api_key_drf_token"),
        ("authtoken", "0004_alter_tokenproxy_options"),
    ]

    operations = [migrations.RunPython(hash_tokens, migrations.RunPython.noop)]
