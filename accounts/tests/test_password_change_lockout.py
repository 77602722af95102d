"""Guessing one's own password on the password-change pages is stopped like sign-in guessing.

The threat is a stolen session: it must not learn the account's password by trying old
passwords on /accounts/password/ (or the admin's password change). Wrong old passwords count
toward the sign-in lockout (django-axes, per username and address), and pause the password
change per user from every address after LOGIN_FAILURE_LIMIT tries; while paused even the right
old password is refused, with a page saying when to try again (429 + Retry-After).
"""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.test import Client

from accounts.models import PasswordCheckTries

pytestmark = pytest.mark.django_db

RIGHT = "s3cret-pass-1"  # the `user` fixture's password
STAFF_RIGHT = "s3cret-pass-3"  # the `staff_user` fixture's password
NEW = "brand-new-Pass-42"
PAGE = "/accounts/password/"


@pytest.fixture(autouse=True)
def _limit(settings):
    settings.AXES_FAILURE_LIMIT = 3


def _signed_in(user, address: str = "203.0.113.7") -> Client:
    client = Client(REMOTE_ADDR=address)
    client.force_login(user)
    return client


def _change(client: Client, old: str, path: str = PAGE):
    return client.post(path, {"old_password": old, "new_password1": NEW, "new_password2": NEW})


def assert_paused(response) -> None:
    assert response.status_code == 429
    assert response["Content-Type"].startswith("text/html")
    assert "Too many wrong passwords" in response.content.decode()
    assert 0 < int(response["Retry-After"]) <= 15 * 60


def test_after_the_limit_even_the_right_old_password_is_refused(user):
    client = _signed_in(user)
    for _ in range(2):
        answer = _change(client, "guess")
        assert answer.status_code == 200
        assert "Your old password was entered incorrectly" in answer.content.decode()
    assert_paused(_change(client, "guess"))

    assert_paused(_change(client, RIGHT))
    user.refresh_from_db()
    assert user.check_password(RIGHT), "the password must not have changed"
    assert_paused(client.get(PAGE))  # said at once, before anyone types in vain


def test_guessing_from_many_addresses_buys_no_more_tries(user):
    """A stolen session may send each guess from another address: counted per user."""
    for n in range(3):
        _change(_signed_in(user, f"192.0.2.{n + 1}"), "guess")

    assert_paused(_change(_signed_in(user, "198.51.100.20"), RIGHT))
    user.refresh_from_db()
    assert user.check_password(RIGHT)


def test_wrong_old_passwords_count_toward_the_sign_in_lockout(user):
    for _ in range(3):
        _change(_signed_in(user), "guess")

    signing_in = Client(REMOTE_ADDR="203.0.113.7")
    answer = signing_in.post("/accounts/login/", {"username": "marketer", "password": RIGHT})
    assert answer.status_code == 429
    assert "_auth_user_id" not in signing_in.session


def test_a_sign_in_lockout_from_this_address_refuses_the_change_too(user):
    stranger = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(3):
        stranger.post("/accounts/login/", {"username": "marketer", "password": "guess"})

    assert_paused(_change(_signed_in(user, "203.0.113.7"), RIGHT))


def test_strangers_failing_to_sign_in_elsewhere_do_not_pause_the_owners_change(user):
    for n in range(6):
        Client(REMOTE_ADDR=f"192.0.2.{n % 2 + 1}").post(
            "/accounts/login/", {"username": "marketer", "password": "guess"}
        )

    answer = _change(_signed_in(user, "198.51.100.20"), RIGHT)
    assert answer.status_code == 302
    user.refresh_from_db()
    assert user.check_password(NEW)


def test_the_right_old_password_forgets_earlier_typos(user):
    client = _signed_in(user)
    for _ in range(2):
        _change(client, "typo")
    assert _change(client, RIGHT).status_code == 302

    for _ in range(2):
        assert _change(client, "typo").status_code == 200
    assert (
        client.post(
            PAGE, {"old_password": NEW, "new_password1": RIGHT + "x", "new_password2": RIGHT + "x"}
        ).status_code
        == 302
    )


def test_the_pause_lifts_after_the_cool_off(user):
    client = _signed_in(user)
    for _ in range(3):
        _change(client, "guess")
    assert_paused(_change(client, RIGHT))

    # LOGIN_LOCKOUT_MINUTES and a second after the last try (each try restarted the wait).
    for model, field in ((PasswordCheckTries, "last_try_at"), (AccessAttempt, "attempt_time")):
        for row in model.objects.all():
            setattr(row, field, getattr(row, field) - timedelta(minutes=15, seconds=1))
            row.save()
    assert _change(client, RIGHT).status_code == 302


def test_the_admin_password_change_is_guarded_the_same_way(staff_user):
    client = _signed_in(staff_user)
    path = "/admin/password_change/"
    assert client.get(path).status_code == 200
    for _ in range(2):
        assert _change(client, "guess", path).status_code == 200
    assert_paused(_change(client, "guess", path))
    # One count for both pages.
    assert_paused(_change(client, STAFF_RIGHT))
    staff_user.refresh_from_db()
    assert staff_user.check_password(STAFF_RIGHT)


def test_the_passwords_tried_are_not_kept_in_the_attempt_log(user):
    _change(_signed_in(user), "guess-Xq7")

    kept = AccessAttempt.objects.get()
    assert "guess-Xq7" not in kept.post_data
    assert NEW not in kept.post_data
    assert kept.username == "marketer"
