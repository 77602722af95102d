"""Password guessing at /accounts/login/ and /admin/login/ is stopped after a few tries.

Failures are counted per username and client IP (django-axes, in the database, so every worker
process and node sees the same count); past LOGIN_FAILURE_LIMIT the sign-in is refused, even
with the right password, with a page saying when to try again (429 + Retry-After).
"""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.db.models import F
from django.test import Client

pytestmark = pytest.mark.django_db

RIGHT = "s3cret-pass-1"  # the `user` fixture's password
STAFF_RIGHT = "s3cret-pass-3"  # the `staff_user` fixture's password


@pytest.fixture(autouse=True)
def _limit(settings):
    settings.AXES_FAILURE_LIMIT = 3


def _sign_in(
    client: Client, username: str, password: str, path: str = "/accounts/login/", **headers
):
    return client.post(path, {"username": username, "password": password}, **headers)


def _signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def assert_locked_out(response) -> None:
    assert response.status_code == 429
    assert response["Content-Type"].startswith("text/html")
    assert "Too many failed sign-ins" in response.content.decode()
    assert 0 < int(response["Retry-After"]) <= 15 * 60


def test_after_the_limit_even_the_right_password_is_refused(user):
    client = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(2):
        assert _sign_in(client, "marketer", "wrong").status_code == 200  # the form, with an error
    assert_locked_out(_sign_in(client, "marketer", "wrong"))

    assert_locked_out(_sign_in(client, "marketer", RIGHT))
    assert not _signed_in(client)


def test_the_admin_sign_in_is_guarded_the_same_way(staff_user):
    client = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(3):
        _sign_in(client, "staffer", "wrong", "/admin/login/")

    assert_locked_out(_sign_in(client, "staffer", STAFF_RIGHT, "/admin/login/"))
    assert not _signed_in(client)
    # Counted once for both forms: the other door is shut too.
    assert_locked_out(_sign_in(client, "staffer", STAFF_RIGHT))


def test_another_address_or_another_user_is_not_locked_out(user, other_user):
    attacker = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(3):
        _sign_in(attacker, "marketer", "wrong")

    owner = Client(REMOTE_ADDR="198.51.100.20")
    assert _sign_in(owner, "marketer", RIGHT).status_code == 302
    assert _signed_in(owner)
    colleague = Client(REMOTE_ADDR="203.0.113.7")
    assert _sign_in(colleague, "rival", "s3cret-pass-2").status_code == 302


def test_spelling_the_username_differently_does_not_buy_more_tries(user):
    """MariaDB compares usernames case- and accent-insensitively, so these are one account."""
    client = Client(REMOTE_ADDR="203.0.113.7")
    for spelling in ("marketer", "Marketer", "MARKETER "):
        _sign_in(client, spelling, "wrong")

    assert_locked_out(_sign_in(client, "MarkÉter", RIGHT))
    assert_locked_out(_sign_in(client, "marketer", RIGHT))


def test_behind_a_proxy_the_forwarded_client_is_counted(user, settings):
    """X-Forwarded-For is trusted NUM_PROXIES deep, as everywhere else (client_ip)."""
    settings.NUM_PROXIES = 1
    proxy = Client(REMOTE_ADDR="10.0.0.1")
    for n in range(3):
        # What the client writes left of the proxy's entry changes nothing.
        _sign_in(proxy, "marketer", "wrong", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}, 203.0.113.7")

    assert_locked_out(
        _sign_in(proxy, "marketer", RIGHT, HTTP_X_FORWARDED_FOR="192.0.2.99, 203.0.113.7")
    )
    elsewhere = _sign_in(proxy, "marketer", RIGHT, HTTP_X_FORWARDED_FOR="198.51.100.20")
    assert elsewhere.status_code == 302


def test_the_lock_lifts_after_the_cool_off(user):
    client = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(3):
        _sign_in(client, "marketer", "wrong")
    assert_locked_out(_sign_in(client, "marketer", RIGHT))

    # The cool-off has passed: the failures are as old as LOGIN_LOCKOUT_MINUTES and a second.
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(minutes=15, seconds=1))
    assert _sign_in(client, "marketer", RIGHT).status_code == 302
    assert _signed_in(client)


def test_a_successful_sign_in_forgets_earlier_typos(user):
    client = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(2):
        _sign_in(client, "marketer", "wrong")
    assert _sign_in(client, "marketer", RIGHT).status_code == 302
    client.logout()

    for _ in range(2):
        assert _sign_in(client, "marketer", "wrong").status_code == 200
    assert _sign_in(client, "marketer", RIGHT).status_code == 302
