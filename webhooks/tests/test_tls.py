"""https webhooks: the connection goes to the checked address, while the certificate must name
the URL's host (not the address), and an untrusted certificate is refused."""

from __future__ import annotations

import http.server
from pathlib import Path

import certifi
import pytest

from links import outbound
from webhooks import sending
from webhooks.tests.tls_server import TLS, served_over_tls

PING = {"id": "1", "event": "ping"}


@pytest.fixture
def tls_receiver(allow_private):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(201)
            self.end_headers()
            self.wfile.write(b"host=" + self.headers["Host"].encode())

        def log_message(self, *args):
            pass

    with served_over_tls(Handler) as port:
        yield port


@pytest.fixture
def trusting_the_test_certificate(monkeypatch, tmp_path):
    bundle = tmp_path / "bundle.pem"
    bundle.write_text(Path(certifi.where()).read_text() + (TLS / "localhost.crt").read_text())
    monkeypatch.setattr(outbound.certifi, "where", lambda: str(bundle))


def test_an_untrusted_certificate_is_refused(tls_receiver):
    result = sending.post(url=f"https://localhost:{tls_receiver}/h", secret="s", payload=PING)
    assert not result.delivered and "CERTIFICATE_VERIFY_FAILED" in result.error


def test_a_trusted_certificate_for_the_urls_host_is_delivered(
    tls_receiver, trusting_the_test_certificate, monkeypatch
):
    monkeypatch.setattr("links.outbound.resolve", lambda host, port, **kw: ["127.0.0.1"])
    result = sending.post(url=f"https://localhost:{tls_receiver}/h", secret="s", payload=PING)
    assert result.delivered and result.status_code == 201
    assert result.excerpt == f"host=localhost:{tls_receiver}"


def test_the_certificate_must_name_the_urls_host_not_the_address(
    tls_receiver, trusting_the_test_certificate
):
    result = sending.post(url=f"https://127.0.0.1:{tls_receiver}/h", secret="s", payload=PING)
    assert not result.delivered and "doesn't match" in result.error
