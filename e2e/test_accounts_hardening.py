"""Accounts hardening against the deployment as it is deployed (both modes), over HTTP and on disk.

- A signed-in session guessing its own password on /accounts/password/ is stopped after
  LOGIN_FAILURE_LIMIT wrong old passwords: even the right one is refused (429 page), from any
  address, and sign-in from the guessing address is locked too.
- The database holds no usable API token: a grep of it (the SQLite file and its -wal, or a dump
  of the MariaDB database) finds neither drf_create_token's token nor one saved through DRF's
  Token model, while both work.
- What the node writes (the SQLite database and its companions, the state dir) is readable by
  its user alone, and files left readable are tightened when the server starts again.

Each case uses its own user and client addresses (X-Forwarded-For, NUM_PROXIES=1), so its
lockouts never touch the other cases' `demo`.
"""

from __future__ import annotations

import contextlib
import re
import secrets
import stat
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import harness
import pytest
from harness import HTTP_TIMEOUT

LOGIN_FAILURE_LIMIT = 5  # the default
PASSWORD = "e2e-hardening-Pass-7"  # noqa: S105 (a throw-away user of a throw-away deployment)
NEW_PASSWORD = "e2e-hardening-New-8"  # noqa: S105

MAKE_USER = """
from django.contrib.auth import get_user_model
get_user_model().objects.create_user({name!r}, password={pw!r})
"""
# A token saved through DRF's own model, as older scripts and tools do.
SAVE_THROUGH_DRF = """
from rest_framework.authtoken.models import Token
from django.contrib.auth import get_user_model
user = get_user_model().objects.create_user({name!r})
print("E2E-TOKEN", Token.objects.create(user=user).key)
"""


def _address() -> str:
    return f"198.18.{secrets.randbelow(250) + 1}.{secrets.randbelow(250) + 1}"


def _browser(dep: harness.Deployment, address: str):
    sess = dep.session()
    sess.headers["X-Forwarded-For"] = address
    return sess


def _sign_in(dep: harness.Deployment, address: str, user: str, password: str):
    sess = _browser(dep, address)
    page = sess.get(dep.url("/accounts/login/"), timeout=HTTP_TIMEOUT)
    answer = harness.post_form(
        dep, sess, "/accounts/login/", page.text, {"username": user, "password": password}
    )
    return sess, answer


def _change_password(dep: harness.Deployment, sess, old: str):
    page = sess.get(dep.url("/accounts/password/"), timeout=HTTP_TIMEOUT)
    if page.status_code != 200:
        return page
    fields = {"old_password": old, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    return harness.post_form(dep, sess, "/accounts/password/", page.text, fields)


def test_guessing_the_old_password_is_stopped_even_for_the_right_one(deployment):
    user = f"guesser-{secrets.token_hex(3)}"
    deployment.manage("shell", "-c", MAKE_USER.format(name=user, pw=PASSWORD))
    thief_address = _address()
    thief, signed_in = _sign_in(deployment, thief_address, user, PASSWORD)
    assert signed_in.status_code == 302, f"sign-in → {signed_in.status_code}"

    answers = [
        _change_password(deployment, thief, f"guess-{n}").status_code
        for n in range(LOGIN_FAILURE_LIMIT)
    ]
    assert answers == [200] * (LOGIN_FAILURE_LIMIT - 1) + [429], answers
    refused = _change_password(deployment, thief, PASSWORD)
    assert refused.status_code == 429, (
        f"the right old password after {LOGIN_FAILURE_LIMIT} wrong ones → {refused.status_code}"
    )
    assert "Too many wrong passwords" in refused.text
    assert int(refused.headers["Retry-After"]) > 0

    # The same session from another address (a thief may rotate them): still refused.
    thief.headers["X-Forwarded-For"] = _address()
    assert _change_password(deployment, thief, PASSWORD).status_code == 429
    # Sign-in from the guessing address is locked too; the password did not change.
    _, again = _sign_in(deployment, thief_address, user, PASSWORD)
    assert again.status_code == 429, f"sign-in from the guessing address → {again.status_code}"
    _, owner = _sign_in(deployment, _address(), user, PASSWORD)
    assert owner.status_code == 302, "the owner's right password no longer signs in"


def _database_bytes(dep: harness.Deployment) -> bytes:
    """Everything the database holds: the SQLite file and its companions, or a MariaDB dump."""
    if dep.mode == "embedded":
        files = sorted(dep.workdir.glob("db.sqlite3*"))
        return b"".join(path.read_bytes() for path in files if path.is_file())
    url = urlsplit(dep.env["DATABASE_URL"])
    argv = ["mariadb-dump", "-uroot", f"-h{url.hostname}", f"-P{url.port}"]
    return harness.run([*argv, url.path.lstrip("/")], env=harness.clean_env()).encode()


def test_the_database_holds_no_usable_token(deployment):
    out = deployment.manage(
        "shell", "-c", SAVE_THROUGH_DRF.format(name=f"scripted-{secrets.token_hex(3)}")
    )
    drf_model_token = re.search(r"E2E-TOKEN ([0-9a-f]{40})", out).group(1)

    for token in (deployment.token, drf_model_token):
        answer = harness.call_as(deployment, token, "GET", "/api/v1/links/")
        assert answer.status_code == 200, f"the token is refused: {answer.status_code}"
    held = _database_bytes(deployment)
    assert len(held) > 10_000, "nothing read from the database"
    assert deployment.token.encode() not in held, "drf_create_token's token is in the database"
    assert drf_model_token.encode() not in held, "a DRF Token's key is in the database"


def _modes(paths: list[Path]) -> dict[str, str]:
    return {str(path): oct(stat.S_IMODE(path.stat().st_mode)) for path in paths if path.exists()}


def _node_files(dep: harness.Deployment) -> list[Path]:
    if dep.mode == "embedded":
        database = sorted(dep.workdir.glob("db.sqlite3*"))
        state = dep.workdir / "db.sqlite3-state"
    else:
        database, state = [], Path(dep.env["NODE_STATE_DIR"])
    return [*database, *sorted(state.rglob("*"))]


def _readable_by_others(dep: harness.Deployment) -> dict[str, str]:
    return {
        name: mode
        for name, mode in _modes(_node_files(dep)).items()
        if int(mode, 8) & 0o077 and not Path(name).is_symlink()
    }


def _watch_modes(dep: harness.Deployment, stop: threading.Event) -> dict[str, str]:
    """Every node file seen and its mode, sampled until `stop`: SQLite's -wal and -shm exist
    only while a connection is open (the last one to close removes them)."""
    seen: dict[str, str] = {}
    while not stop.is_set():
        with contextlib.suppress(FileNotFoundError):
            seen.update(_modes(_node_files(dep)))
        time.sleep(0.005)
    return seen


def test_the_node_files_are_its_users_alone_and_tightened_at_start(deployment):
    # Traffic while watching, so the state dir holds what a working node writes (spool,
    # counters) and the database is written (its -wal and -shm exist meanwhile).
    stop = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        watching = pool.submit(_watch_modes, deployment, stop)
        try:
            for n in range(10):
                link = harness.create_link(deployment, harness.unique_url(f"private-files-{n}"))
            harness.burst(deployment, link["code"], count=20, clients=4)
            harness.wait_for_visits(deployment, link["code"], 20, timeout=60)
        finally:
            stop.set()
        seen = watching.result()

    names = {Path(name).name for name in seen}
    if deployment.mode == "embedded":
        assert {"db.sqlite3", "db.sqlite3-wal", "db.sqlite3-shm"} <= names, sorted(names)
    assert len(names) > 3, f"the state dir holds nothing: {sorted(names)}"
    loose = {
        name: mode
        for name, mode in seen.items()
        if int(mode, 8) & 0o077 and not Path(name).is_symlink()
    }
    assert loose == {}, "files readable by other users"
    assert _readable_by_others(deployment) == {}
    harness.note(deployment, "node files", f"{len(seen)} seen, modes {sorted(set(seen.values()))}")
    files = _node_files(deployment)

    # As an older version (or a copy made with the usual umask) would have left them.
    loosened = [path for path in files if path.is_file()][:3]
    for path in loosened:
        path.chmod(0o644)
    assert _readable_by_others(deployment)
    harness.restart_web(deployment)

    assert _readable_by_others(deployment) == {}, "files left readable at start stay readable"


@pytest.fixture(autouse=True)
def _alive(deployment):
    deployment.check_alive()
