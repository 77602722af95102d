"""The npm `bitly` client (7.1.2, what Node tools for Bitly are built on) against a live server:
shorten, info, getBitlink, expand, a PATCH, a create with a title and one with deeplinks through
its bitlyRequest,
clicks and the clicks summary give back the values it read from our answers, and its refusals
carry Bitly's error body.

The client always speaks HTTPS to port 443 of its `apiUrl` (a host name: a port in it is taken
for an IPv6 address), so a small TLS proxy with a certificate made here listens on port 443 of a
loopback address and forwards each call to pytest-django's live server. The client is installed
with `npm ci` from bitly_client/package-lock.json (beside this file) into .cache/bitly-client/
(once);
without node, npm, openssl or the registry, or without the right to listen on port 443, the test
skips and says why, unless BITLY_CLIENT_REQUIRED=1 (CI), which turns that into a failure.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests
from django.utils import timezone

from accounts.services import api_key_create
from analytics.models import HourlyClick
from links.models import UrlLink
from links.services.create import link_create
from tests.npm_clients import client_unavailable, npm_client_installed

pytestmark = [pytest.mark.bitly_client, pytest.mark.django_db(transaction=True)]

CLIENT_SOURCE = Path(__file__).parent / "bitly_client"
CLIENT_FILES = ("package.json", "package-lock.json", "client.js")
LONG_URL = "https://www.example.com/spring?utm_source=bitly"
NEW_URL = "https://www.example.com/summer"
FORWARDED_HEADERS = ("Authorization", "Content-Type", "Accept")


def _unavailable(reason: str):
    client_unavailable(reason, required_env="BITLY_CLIENT_REQUIRED")


@pytest.fixture(scope="session")
def bitly_client_dir() -> Path:
    return npm_client_installed(
        source=CLIENT_SOURCE,
        files=CLIENT_FILES,
        name="bitly-client",
        ready="node_modules/bitly/package.json",
        label="the npm bitly client",
        tools=("node", "npm"),
        required_env="BITLY_CLIENT_REQUIRED",
    )


def _certificate(folder: Path, address: str) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    # fmt: off
    command = [
        "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        "-keyout", str(key), "-out", str(cert), "-subj", f"/CN={address}",
        "-addext", f"subjectAltName=IP:{address}",
    ]
    # fmt: on
    if shutil.which("openssl") is None:
        _unavailable("openssl is needed to make the TLS proxy's certificate")
    subprocess.run(command, check=True, capture_output=True, timeout=60)
    return cert, key


def _forwarder(upstream: str) -> type[BaseHTTPRequestHandler]:
    class Forward(BaseHTTPRequestHandler):
        """Each call as it came (method, path, the headers the API reads, body) to `upstream`."""

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {
                name: self.headers[name] for name in FORWARDED_HEADERS if name in self.headers
            }
            answer = requests.request(
                self.command,
                upstream + self.path,
                headers=headers,
                data=body,
                allow_redirects=False,
                timeout=30,
            )
            self.send_response(answer.status_code)
            for name in ("Content-Type", "Retry-After"):
                if name in answer.headers:
                    self.send_header(name, answer.headers[name])
            self.send_header("Content-Length", str(len(answer.content)))
            self.end_headers()
            self.wfile.write(answer.content)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _forward

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Forward


@pytest.fixture
def tls_proxy(live_server, tmp_path) -> Iterator[str]:
    """A TLS proxy on port 443 of a random loopback address in front of the live server; yields
    the address (the client's `apiUrl`), with NODE_EXTRA_CA_CERTS' file beside it."""
    # A random address of 127.0.0.0/8: another run's proxy is on another one.
    address = "127." + ".".join(str(secrets.randbelow(250) + 1) for _ in range(3))
    cert, key = _certificate(tmp_path, address)
    try:
        server = ThreadingHTTPServer((address, 443), _forwarder(live_server.url))
    except OSError as error:
        _unavailable(f"cannot listen on {address}:443 for the client's HTTPS ({error})")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield address
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _run_client(folder: Path, *, address: str, cert: Path, token: str, domain: str) -> dict:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
        "NODE_EXTRA_CA_CERTS": str(cert),
        "BITLY_TOKEN": token,
        "BITLY_API_HOST": address,
        "BITLY_DOMAIN": domain,
        "LONG_URL": LONG_URL,
        "NEW_URL": NEW_URL,
    }
    done = subprocess.run(
        ["node", "client.js"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_npm_bitly_client_against_a_live_server(
    bitly_client_dir, tls_proxy, live_server, tmp_path, user
):
    existing = link_create(user=user, long_url=LONG_URL).link
    # Made three days ago: `units=-1` (every day since its creation) reaches yesterday's clicks.
    UrlLink.objects.filter(pk=existing.pk).update(created_at=timezone.now() - timedelta(days=3))
    today = timezone.now().replace(minute=0, second=0, microsecond=0)
    for days, clicks in ((1, 4), (0, 5)):
        HourlyClick.objects.create(
            link=existing, hour=today - timedelta(days=days), clicks=clicks, unique_visitors=1
        )
    token = api_key_create(user=user, name="npm bitly")[1]
    host = "localhost"  # the live server's: the default domain's host
    short_url = f"{live_server.url}/{existing.code}"

    out = _run_client(
        bitly_client_dir, address=tls_proxy, cert=tmp_path / "cert.pem", token=token, domain=host
    )

    assert out["existing"]["id"] == f"{host}/{existing.code}"
    assert out["existing"]["link"] == short_url
    assert out["existing"]["long_url"] == LONG_URL
    created = UrlLink.objects.get(owner=user, long_url=NEW_URL)
    assert out["created"]["id"] == f"{host}/{created.code}"  # `domain: "bit.ly"`: the default
    assert out["info"]["id"] == out["existing"]["id"]
    assert out["info"]["created_by"] == "marketer"
    assert out["getBitlink"]["long_url"] == NEW_URL
    assert out["expanded"] == {
        "created_at": out["existing"]["created_at"],
        "link": short_url,
        "id": f"{host}/{existing.code}",
        "long_url": LONG_URL,
    }
    assert out["updated"]["title"] == "Made by the npm client"
    assert sorted(out["updated"]["tags"]) == ["bitly", "npm"]
    created.refresh_from_db()
    assert created.title == "Made by the npm client"
    assert out["created_with_title"]["title"] == "Titled"
    apps = UrlLink.objects.get(owner=user, long_url=f"{NEW_URL}?with=deeplinks")
    assert (apps.ios_url, apps.android_url) == (
        "exampleshop://product/7",
        "https://shop.example.com/app/product/7",
    )
    assert [(d["os"], d["app_uri_path"]) for d in out["created_with_deeplinks"]["deeplinks"]] == [
        ("ios", apps.ios_url),
        ("android", apps.android_url),
    ]
    assert out["badDeeplink"]["refused"]["message"] == "INVALID_ARG_DEEPLINKS"
    assert not UrlLink.objects.filter(long_url=f"{NEW_URL}?with=bad-deeplink").exists()

    by_day = out["clicks"]["link_clicks"]
    assert out["clicks"]["unit"] == "day"
    assert out["clicks"]["units"] == -1
    assert sum(entry["clicks"] for entry in by_day) == 9
    assert by_day[0]["clicks"] >= 4  # newest first: today (or yesterday near midnight)
    assert out["clicksByDay"]["link_clicks"] == by_day
    assert out["summary"]["total_clicks"] == 9

    assert out["notFound"]["refused"]["message"] == "NOT_FOUND"
    assert out["badUrl"]["refused"]["message"] == "INVALID_ARG_LONG_URL"
    assert out["byMinute"]["refused"]["message"] == "INVALID_ARG_UNIT"
    assert out["wrongToken"]["refused"]["message"] == "FORBIDDEN"
