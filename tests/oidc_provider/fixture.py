"""Start and stop the test provider (tests.oidc_provider.run) for a test, and sign in at it as a
browser would, with requests (the browser tests use Chromium instead)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import requests

ROOT = Path(__file__).resolve().parents[2]
CLIENT_ID = "shorturl-tests"
CLIENT_SECRET = "shorturl-tests-secret-0123456789"


@dataclasses.dataclass(frozen=True)
class Person:
    username: str
    email: str
    password: str = "provider-pass-4821"
    first_name: str = ""
    last_name: str = ""
    verified: bool = True


@dataclasses.dataclass(frozen=True)
class Provider:
    issuer: str
    client_id: str
    client_secret: str

    def environment(self, **more) -> dict[str, str]:
        """shorturl's settings for signing in through this provider: a deployment's environment
        variables, and (strings all) what a test sets on pytest-django's `settings`."""
        return {
            "SSO_ISSUER": self.issuer,
            "SSO_CLIENT_ID": self.client_id,
            "SSO_CLIENT_SECRET": self.client_secret,
            **more,
        }


@contextlib.contextmanager
def signing_in_through(settings, provider: Provider, **more) -> Iterator[Provider]:
    """shorturl's `settings` (pytest-django's fixture) pointed at `provider`, its discovery
    document read afresh on the way in and out."""
    from accounts import sso

    for name, value in provider.environment(**more).items():
        setattr(settings, name, value)
    sso.forget_provider()
    try:
        yield provider
    finally:
        sso.forget_provider()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def issuer_at(port: int, host: str = "127.0.0.1") -> str:
    """The issuer of a provider that `running_provider(port=port, host=host)` starts."""
    return f"http://{host}:{port}/o"


@contextlib.contextmanager
def running_provider(
    *,
    people: list[Person],
    redirect_uris: list[str],
    workdir: Path,
    start_seconds: float = 60,
    port: int | None = None,
    host: str = "127.0.0.1",
) -> Iterator[Provider]:
    """The provider on a loopback port, knowing `people` and shorturl as a client that may
    return to `redirect_uris`; stopped on the way out.

    `port`: a port chosen beforehand (a free one by default), so a deployment can be told the
    issuer (`issuer_at`) before the provider, which needs the deployment's callback, starts.
    `host`: the issuer's host name (it always listens on 127.0.0.1); a browser keeps cookies
    per host, not per port, so one signing in at shorturl on 127.0.0.1 needs the provider
    under another name ("localhost"), or the two sites' `sessionid` cookies overwrite each
    other."""
    port = port or _free_port()
    issuer = issuer_at(port, host)
    config = workdir / "oidc-provider.json"
    config.write_text(
        json.dumps(
            {
                "port": port,
                "issuer": issuer,
                "database": str(workdir / "oidc-provider.sqlite3"),
                "users": [dataclasses.asdict(person) for person in people],
                "client": {
                    "id": CLIENT_ID,
                    "secret": CLIENT_SECRET,
                    "redirect_uris": redirect_uris,
                },
            }
        )
    )
    log = open(workdir / "oidc-provider.log", "wb")  # noqa: SIM115 (closed below)
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.oidc_provider.run", str(config)],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_for(issuer, process, start_seconds, workdir / "oidc-provider.log")
        yield Provider(issuer=issuer, client_id=CLIENT_ID, client_secret=CLIENT_SECRET)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _wait_for(issuer: str, process: subprocess.Popen, seconds: float, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the test provider stopped:\n{log.read_text()[-3000:]}")
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"{issuer}/.well-known/openid-configuration", timeout=2).ok:
                return
        time.sleep(0.1)
    raise RuntimeError(f"the test provider did not answer in {seconds} s:\n{log.read_text()}")


def sign_in_at_provider(authorize_url: str, person: Person, *, stop_at: str) -> str:
    """Follow the provider's pages from `authorize_url` as a browser would, signing in as
    `person`: the address the provider sends the browser back to (starting with `stop_at`),
    not followed."""
    browser = requests.Session()
    url = authorize_url
    for _ in range(10):
        if url.startswith(stop_at):
            return url
        answer = browser.get(url, allow_redirects=False, timeout=10)
        if answer.is_redirect:
            url = urljoin(url, answer.headers["Location"])
            continue
        if answer.status_code == 200 and 'name="password"' in answer.text:
            token = answer.text.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"')[0]
            next_url = dict(
                pair.split("=", 1) for pair in urlsplit(answer.url).query.split("&") if pair
            ).get("next", "")
            answer = browser.post(
                answer.url,
                data={
                    "csrfmiddlewaretoken": token,
                    "username": person.username,
                    "password": person.password,
                    "next": requests.utils.unquote(next_url),
                },
                headers={"Referer": answer.url},
                allow_redirects=False,
                timeout=10,
            )
            if not answer.is_redirect:
                raise AssertionError(f"the provider refused {person.username}: {answer.text}")
            url = urljoin(url, answer.headers["Location"])
            continue
        raise AssertionError(f"unexpected answer from {url}: {answer.status_code} {answer.text}")
    raise AssertionError("the provider kept redirecting")
