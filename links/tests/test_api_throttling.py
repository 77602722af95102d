"""API rate limits: per user for writes and reads, per IP for anonymous callers; 429 + Retry-After.

The counters live in the shared cache (Redis in the services run), so they hold across processes.
"""

import pytest
from rest_framework.test import APIClient

from links.tests.helpers import client_for

pytestmark = pytest.mark.django_db


def _create(client, n: int):
    return client.post("/api/v1/links/", {"long_url": f"https://example.com/{n}"}, format="json")


def assert_throttled(response):
    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= 60
    assert response.json()["detail"].startswith("Request was throttled.")


def test_writes_are_limited_per_user_and_reads_go_on(user, other_user, rates):
    rates(api_write="3/min")
    mine, theirs = client_for(user), client_for(other_user)

    assert [_create(mine, n).status_code for n in range(3)] == [201] * 3
    assert_throttled(_create(mine, 3))
    assert_throttled(mine.post("/api/v1/links/bulk/", {"items": []}, format="json"))
    assert mine.get("/api/v1/links/").status_code == 200  # reads have their own budget
    assert _create(theirs, 0).status_code == 201  # another user has their own budget


def test_patch_and_delete_count_as_writes(user, rates):
    rates(api_write="2/min")
    client = client_for(user)
    code = _create(client, 1).json()["code"]

    assert client.patch(f"/api/v1/links/{code}/", {"title": "t"}, format="json").status_code == 200
    assert_throttled(client.delete(f"/api/v1/links/{code}/"))


def test_reads_are_limited_per_user(user, rates):
    rates(api_read="2/min")
    client = client_for(user)

    assert client.get("/api/v1/links/").status_code == 200
    assert client.get("/api/v1/links/?page_size=5").status_code == 200
    assert_throttled(client.get("/api/v1/links/"))
    assert _create(client, 1).status_code == 201  # writes have their own budget


def test_anonymous_callers_are_limited_per_ip_before_being_refused(rates):
    rates(anon="2/min")
    here, elsewhere = APIClient(REMOTE_ADDR="10.0.0.1"), APIClient(REMOTE_ADDR="10.0.0.2")

    assert [here.get("/api/v1/links/").status_code for _ in range(2)] == [401, 401]
    assert_throttled(here.get("/api/v1/links/"))
    assert_throttled(here.get("/api/v1/schema/"))
    assert elsewhere.get("/api/v1/links/").status_code == 401


def test_a_view_open_to_anonymous_callers_counts_each_request_once(rates):
    """Shlink's health check needs no key: each anonymous call is one of the IP's allowance
    (it used to count twice, once before the permission check and once by DRF)."""
    rates(anon="4/min")
    caller = APIClient(REMOTE_ADDR="10.0.0.3")
    assert [caller.get("/rest/health").status_code for _ in range(5)] == [200] * 4 + [429]


def test_x_forwarded_for_is_not_trusted_without_proxies(rates, settings):
    """Rotating a forged X-Forwarded-For must not buy a fresh budget."""
    rates(anon="2/min")
    settings.NUM_PROXIES = 0
    client = APIClient(REMOTE_ADDR="10.0.0.1")

    for n in range(2):
        client.get("/api/v1/links/", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")

    assert_throttled(client.get("/api/v1/links/", HTTP_X_FORWARDED_FOR="192.0.2.99"))


def test_x_forwarded_for_names_the_client_behind_a_trusted_proxy(rates, settings):
    rates(anon="1/min")
    settings.NUM_PROXIES = 1
    proxy = APIClient(REMOTE_ADDR="10.0.0.1")

    assert proxy.get("/api/v1/links/", HTTP_X_FORWARDED_FOR="203.0.113.5").status_code == 401
    assert proxy.get("/api/v1/links/", HTTP_X_FORWARDED_FOR="203.0.113.6").status_code == 401
    assert_throttled(proxy.get("/api/v1/links/", HTTP_X_FORWARDED_FOR="spoofed, 203.0.113.6"))


def test_wrong_tokens_are_limited_per_ip_like_callers_without_one(rates):
    """Guessing tokens must not be cheaper than calling anonymously: a wrong token counts
    against the caller's IP and meets the same 429 + Retry-After."""
    rates(anon="2/min")
    guesser = APIClient(REMOTE_ADDR="10.0.0.1")
    guesser.credentials(HTTP_AUTHORIZATION="Token 0123456789abcdef0123456789abcdef01234567")

    assert [guesser.get("/api/v1/links/").status_code for _ in range(2)] == [401, 401]
    assert_throttled(guesser.get("/api/v1/links/"))
    assert_throttled(guesser.post("/api/v1/links/", {"long_url": "https://e.com/"}, format="json"))
    assert_throttled(guesser.get("/api/v1/schema/"))
    # The same budget as a caller without credentials from that address.
    assert_throttled(APIClient(REMOTE_ADDR="10.0.0.1").get("/api/v1/links/"))
    elsewhere = APIClient(REMOTE_ADDR="10.0.0.2")
    elsewhere.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert elsewhere.get("/api/v1/links/").status_code == 401


def test_a_valid_token_is_not_held_back_by_wrong_ones_from_its_address(user, rates):
    rates(anon="1/min")
    wrong = APIClient(REMOTE_ADDR="10.0.0.1")
    wrong.credentials(HTTP_AUTHORIZATION="Token wrong")
    wrong.get("/api/v1/links/")
    assert_throttled(wrong.get("/api/v1/links/"))

    assert client_for(user, REMOTE_ADDR="10.0.0.1").get("/api/v1/links/").status_code == 200
