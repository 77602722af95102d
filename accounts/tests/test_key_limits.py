"""Per-key rate limits: counted per key and minute in the shared counter (Redis in services
mode, the database otherwise), refused with 429 + Retry-After past the limit, and told in the
RateLimit-* headers of every answer to a limited key, in the native API and the compat ones."""

from unittest import mock

import pytest
from django.core.exceptions import ValidationError
from rest_framework.test import APIClient

from accounts import key_limits, services
from accounts.models import ApiKey, ApiKeyWindow
from audit.models import AuditEntry
from workspaces.selectors import personal_workspace_of

pytestmark = pytest.mark.django_db(transaction=True)

LINKS = "/api/v1/links/"


def keyed_client(user, **key_options) -> tuple[APIClient, ApiKey]:
    api_key, raw_key = services.api_key_create(user=user, name="Tool", **key_options)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw_key}")
    return client, api_key


def limit_headers(response) -> tuple[int, int, int]:
    return (
        int(response["RateLimit-Limit"]),
        int(response["RateLimit-Remaining"]),
        int(response["RateLimit-Reset"]),
    )


def test_the_counter_counts_each_request_once_and_refuses_past_the_limit(user, settings):
    api_key, _ = services.api_key_create(user=user, name="Tool", rate_limit=3)
    taken = [key_limits.take(api_key) for _ in range(4)]

    assert [t.remaining for t in taken] == [2, 1, 0, 0]
    assert [t.allowed for t in taken] == [True, True, True, False]
    assert all(t.limit == 3 and 1 <= t.reset <= 60 for t in taken)
    # Redis holds the count in services mode; the database only without it.
    assert ApiKeyWindow.objects.exists() is not bool(settings.REDIS_URL)


def test_a_new_minute_starts_the_count_again_and_old_windows_are_dropped(user):
    api_key, _ = services.api_key_create(user=user, name="Tool", rate_limit=1)
    with mock.patch("accounts.key_limits.time.time", return_value=600_000.0):
        assert key_limits.take(api_key).allowed
        assert not key_limits.take(api_key).allowed
    with mock.patch("accounts.key_limits.time.time", return_value=600_060.5):
        state = key_limits.take(api_key)
    assert state.allowed and state.remaining == 0 and state.reset == 60
    with mock.patch("accounts.key_limits.time.time", return_value=600_200.0):
        assert key_limits.take(api_key).allowed


def test_the_database_counter_is_exact_and_keeps_two_windows(user):
    """The embedded mode's counter (and services mode's while Redis is away)."""
    api_key, _ = services.api_key_create(user=user, name="Tool", rate_limit=5)
    counts = [key_limits._count_in_database(api_key.pk, 100) for _ in range(3)]
    key_limits._count_in_database(api_key.pk, 101)
    key_limits._count_in_database(api_key.pk, 102)

    assert counts == [1, 2, 3]
    assert sorted(
        ApiKeyWindow.objects.filter(api_key=api_key).values_list("window", flat=True)
    ) == [
        101,
        102,
    ]


def test_a_key_without_a_limit_uses_its_workspaces_default_else_none(user):
    api_key, _ = services.api_key_create(user=user, name="Tool")
    assert key_limits.take(api_key) is None

    workspace = personal_workspace_of(user)
    workspace.api_rate_limit = 7
    workspace.save()
    api_key.refresh_from_db()
    assert key_limits.take(api_key).limit == 7

    services.api_key_set_rate_limit(key_id=api_key.pk, user=user, rate_limit=2)
    api_key.refresh_from_db()
    assert key_limits.take(api_key).limit == 2


@pytest.mark.parametrize("value", [0, -1, 1_000_001, "10", 2.5, True])
def test_a_limit_must_be_a_whole_positive_number(user, value):
    with pytest.raises(ValidationError) as refused:
        services.api_key_create(user=user, name="Tool", rate_limit=value)
    assert "rate_limit" in refused.value.message_dict
    api_key, _ = services.api_key_create(user=user, name="Tool")
    with pytest.raises(ValidationError):
        services.api_key_set_rate_limit(key_id=api_key.pk, user=user, rate_limit=value)


def test_another_users_key_is_not_theirs_to_change(user, other_user):
    api_key, _ = services.api_key_create(user=user, name="Tool")
    with pytest.raises(ApiKey.DoesNotExist):
        services.api_key_set_rate_limit(key_id=api_key.pk, user=other_user, rate_limit=5)


def test_the_api_answers_falling_headers_then_429_with_retry_after(user, rates):
    rates()
    client, _ = keyed_client(user, rate_limit=3)

    answers = [client.get(LINKS) for _ in range(4)]

    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert [limit_headers(a)[:2] for a in answers] == [(3, 2), (3, 1), (3, 0), (3, 0)]
    assert 1 <= int(answers[3]["Retry-After"]) <= 60
    assert int(answers[3]["Retry-After"]) == limit_headers(answers[3])[2]
    # Writes and reads share the key's budget (the global rates still count them apart).
    assert (
        client.post(LINKS, {"long_url": "https://example.com/"}, format="json").status_code == 429
    )


def test_errors_carry_the_headers_too_and_keys_are_counted_apart(user, rates):
    rates()
    client, _ = keyed_client(user, rate_limit=10)
    other, _ = keyed_client(user, rate_limit=10)

    missing = client.get(f"{LINKS}nope/")
    assert missing.status_code == 404
    assert limit_headers(missing)[:2] == (10, 9)
    assert limit_headers(other.get(LINKS))[:2] == (10, 9)


def test_a_key_without_a_limit_gets_no_headers_and_the_global_rates(user, rates):
    rates(api_read="2/min")
    client, _ = keyed_client(user)
    answers = [client.get(LINKS) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert "RateLimit-Limit" not in answers[0]


def test_the_workspace_default_is_set_through_the_api_by_owners(user, other_user, rates):
    rates()
    owner, _ = keyed_client(user)
    slug = personal_workspace_of(user).slug

    refused = owner.patch(f"/api/v1/workspaces/{slug}/", {"api_rate_limit": 0}, format="json")
    assert refused.status_code == 400 and "api_rate_limit" in refused.json()
    answer = owner.patch(f"/api/v1/workspaces/{slug}/", {"api_rate_limit": 5}, format="json")
    assert answer.status_code == 200 and answer.json()["api_rate_limit"] == 5
    assert answer.json()["name"] == personal_workspace_of(user).name

    following = owner.get(LINKS)
    assert limit_headers(following)[:2] == (5, 4)

    stranger, _ = keyed_client(other_user)
    assert (
        stranger.patch(
            f"/api/v1/workspaces/{slug}/", {"api_rate_limit": 9}, format="json"
        ).status_code
        == 404
    )


def test_the_shlink_api_counts_the_key_and_answers_the_headers(user, rates):
    rates()
    _, raw_key = services.api_key_create(user=user, name="Shlink dashboard", rate_limit=2)
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=raw_key)

    answers = [client.get("/rest/v3/short-urls") for _ in range(3)]

    assert [a.status_code for a in answers] == [200, 200, 429]
    assert [limit_headers(a)[:2] for a in answers] == [(2, 1), (2, 0), (2, 0)]
    assert 1 <= int(answers[2]["Retry-After"]) <= 60


def test_the_yourls_and_bitly_apis_share_the_keys_budget(user, rates):
    rates()
    _, raw_key = services.api_key_create(user=user, name="Tools", rate_limit=2)
    client = APIClient()

    yourls = client.get(
        "/yourls-api.php", {"action": "version", "format": "json", "signature": raw_key}
    )
    bitly = client.get("/v4/bitlinks/example.com/abc", HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    refused = client.get(
        "/yourls-api.php", {"action": "version", "format": "json", "signature": raw_key}
    )

    assert yourls.status_code == 200 and limit_headers(yourls)[:2] == (2, 1)
    assert limit_headers(bitly)[:2] == (2, 0)
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert "RateLimit-Remaining" in refused["Access-Control-Expose-Headers"]


def test_staff_set_a_keys_limit_and_a_workspaces_default_in_the_admin(admin_client, user):
    api_key, _ = services.api_key_create(user=user, name="Tool")
    page = admin_client.get(f"/admin/accounts/apikey/{api_key.pk}/change/")
    assert page.status_code == 200 and 'name="rate_limit"' in page.content.decode()
    assert 'name="name"' not in page.content.decode()  # all else stays read-only

    refused = admin_client.post(f"/admin/accounts/apikey/{api_key.pk}/change/", {"rate_limit": "0"})
    assert refused.status_code == 200 and "greater than or equal to 1" in refused.content.decode()
    saved = admin_client.post(f"/admin/accounts/apikey/{api_key.pk}/change/", {"rate_limit": "12"})
    assert saved.status_code == 302
    api_key.refresh_from_db()
    assert api_key.rate_limit == 12 and api_key.name == "Tool"
    # The audit log names the staff member who changed it, not the key's owner.
    entry = AuditEntry.objects.get(action="api_key.update", object_id=str(api_key.pk))
    assert (entry.actor, entry.channel) == ("staffer", "admin")
    assert entry.changes == {"rate_limit": [None, 12]}

    workspace = personal_workspace_of(user)
    page = admin_client.get(f"/admin/workspaces/workspace/{workspace.pk}/change/")
    assert 'name="api_rate_limit"' in page.content.decode()


def test_owners_set_the_default_on_the_workspace_page(client, user, other_user):
    workspace = personal_workspace_of(user)
    page_url = f"/workspaces/{workspace.slug}/"
    client.force_login(user)
    assert "Requests per minute for each key" in client.get(page_url).content.decode()

    refused = client.post(page_url, {"action": "api_rate_limit", "api_rate_limit": "0"})
    assert refused.status_code == 400 and "from 1 to 1,000,000" in refused.content.decode()
    saved = client.post(page_url, {"action": "api_rate_limit", "api_rate_limit": "30"})
    assert saved.status_code == 302
    workspace.refresh_from_db()
    assert workspace.api_rate_limit == 30
    client.post(page_url, {"action": "api_rate_limit", "api_rate_limit": ""})
    workspace.refresh_from_db()
    assert workspace.api_rate_limit is None

    client.force_login(other_user)  # not a member: no page, no change
    assert (
        client.post(page_url, {"action": "api_rate_limit", "api_rate_limit": "5"}).status_code
        == 404
    )


def test_while_redis_does_not_answer_the_database_counts(user, settings):
    """Services mode with its Redis away (nothing listens on port 1): the limit still holds."""
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": settings.REDIS_URL,
            "OPTIONS": {
                "CLIENT_CLASS": "django_redis.client.DefaultClient",
                "IGNORE_EXCEPTIONS": True,
                "SOCKET_CONNECT_TIMEOUT": 0.5,
                "SOCKET_TIMEOUT": 0.5,
            },
        }
    }
    api_key, _ = services.api_key_create(user=user, name="Tool", rate_limit=2)

    assert [key_limits.take(api_key).allowed for _ in range(3)] == [True, True, False]
    assert ApiKeyWindow.objects.get(api_key=api_key).count == 3
