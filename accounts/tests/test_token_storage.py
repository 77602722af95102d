"""API tokens are kept only as hashes, wherever they come from, and still work as before.

DRF's authtoken table kept each key in plain text, so a copy of the database (a backup, a
readable SQLite file) handed out working credentials. `manage.py drf_create_token USER` now
prints a token kept only as a hash (an API key acting as DRF tokens did: every scope, every
workspace of its user); a DRF Token row saved by any code is folded into such a key before its
key reaches the database; the migration hashes the tokens made before.
"""

import re
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection, models
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from rest_framework.authtoken.models import Token, TokenProxy
from rest_framework.test import APIClient

from accounts.models import ApiKey

LINKS_API = "/api/v1/links/"


def rows_holding(text: str) -> list[str]:
    """Every table and text column holding `text`: a grep of the database."""
    found = set()
    tables = set(connection.introspection.table_names())  # an older state lacks newer tables
    for model in apps.get_models(include_auto_created=True):
        if model._meta.db_table not in tables:
            continue
        manager = model._default_manager
        for field in model._meta.concrete_fields:
            if not isinstance(field, models.CharField | models.TextField):
                continue
            if manager.filter(**{f"{field.attname}__contains": text}).exists():
                found.add(f"{model._meta.db_table}.{field.column}")
    return sorted(found)


def works(key: str) -> bool:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get(LINKS_API).status_code == 200


def create_token(username: str, *args: str) -> str:
    out = StringIO()
    call_command("drf_create_token", username, *args, stdout=out)
    match = re.fullmatch(r"Generated token ([0-9a-f]{40}) for user (\S+)\n", out.getvalue())
    assert match, out.getvalue()
    assert match[2] == username
    return match[1]


@pytest.mark.django_db
def test_drf_create_token_prints_a_working_token_that_no_row_holds(user):
    key = create_token("marketer")

    assert works(key)
    assert rows_holding(key) == []
    assert not Token.objects.exists()
    kept = ApiKey.objects.get(user=user)
    assert (kept.name, kept.prefix, kept.drf_token, kept.workspace) == (
        "API token",
        key[:6],
        True,
        None,
    )


@pytest.mark.django_db
def test_each_run_makes_another_token_and_reset_revokes_the_earlier_ones(user, client):
    first = create_token("marketer")
    second = create_token("marketer")
    assert first != second
    assert works(first) and works(second)

    third = create_token("marketer", "--reset")
    assert works(third)
    assert not works(first) and not works(second)
    # A key the person made on their page is theirs to revoke, not the command's.
    client.force_login(user)
    client.post("/accounts/api-keys/", {"name": "Mine", "scopes": ["links:read"]})
    create_token("marketer", "-r")
    assert ApiKey.objects.get(name="Mine").revoked_at is None


@pytest.mark.django_db
def test_the_command_names_a_missing_user():
    with pytest.raises(Exception, match="user nobody does not exist"):
        create_token("nobody")


@pytest.mark.django_db
@pytest.mark.parametrize("model", [Token, TokenProxy])
def test_a_drf_token_saved_by_any_code_works_and_is_kept_only_as_a_hash(user, model):
    token = model.objects.create(user=user)

    assert re.fullmatch(r"[0-9a-f]{40}", token.key)
    assert works(token.key)
    assert rows_holding(token.key) == []
    assert not Token.objects.exists()
    # Made again for the same user (get_or_create, as DRF's own command did): another key.
    again, created = Token.objects.get_or_create(user=user)
    assert created and again.key != token.key
    assert works(again.key) and works(token.key)


@pytest.mark.django_db
def test_drf_style_tokens_act_with_every_scope_in_the_compat_layers(user):
    key = create_token("marketer")

    yourls = Client().get("/yourls-api.php", {"signature": key, "action": "db-stats"})
    assert yourls.status_code == 200, yourls.content
    shlink = APIClient()
    shlink.credentials(HTTP_X_API_KEY=key)
    assert shlink.get("/rest/v3/short-urls").status_code == 200
    made = APIClient()
    made.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    created = made.post("/api/v1/webhooks/", {}, format="json")
    assert created.status_code != 403, created.content  # webhooks:write too


@pytest.mark.django_db
def test_the_admin_lists_tokens_without_ever_showing_one(staff_user, user):
    key = create_token("marketer")
    admin = Client()
    admin.force_login(staff_user)

    listing = admin.get("/admin/accounts/apikey/")
    assert listing.status_code == 200
    assert key[:6] in listing.content.decode()
    assert key not in listing.content.decode()
    page = admin.get(f"/admin/accounts/apikey/{ApiKey.objects.get().pk}/change/")
    assert page.status_code == 200
    assert key not in page.content.decode()
    assert admin.get("/admin/authtoken/tokenproxy/").status_code == 404
    assert admin.get("/admin/accounts/apikey/add/").status_code == 403


@pytest.mark.django_db
def test_the_admin_revokes_a_token(staff_user, user):
    key = create_token("marketer")
    admin = Client()
    admin.force_login(staff_user)

    admin.post(
        "/admin/accounts/apikey/",
        {"action": "revoke", "_selected_action": [ApiKey.objects.get().pk]},
    )
    assert not works(key)


@pytest.mark.django_db(transaction=True)
def test_tokens_kept_in_plain_text_before_are_hashed_by_the_migration(django_user_model):
    executor = MigrationExecutor(connection)
    before = [
        ("accounts", "0005_api_key_drf_token"),
        ("authtoken", "0004_alter_tokenproxy_options"),
    ]
    executor.migrate(before)
    old_apps = executor.loader.project_state(before).apps
    user = django_user_model.objects.create_user("veteran", password="s3cret-pass-9")
    key = "0123456789abcdef0123456789abcdef01234567"
    # The old state's model: no signal of today's code runs for it, as none did back then.
    old_apps.get_model("authtoken", "Token").objects.create(key=key, user_id=user.pk)
    assert rows_holding(key) == ["authtoken_token.key"]

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert rows_holding(key) == []
    assert works(key)
    assert ApiKey.objects.get(user=user).drf_token
