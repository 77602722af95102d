"""https webhooks: the connection goes to the checked address, while the certificate must name
the URL's host (not the address), and an untrusted certificate is refused."""

from __future__ import annotations

import http.server
import ssl
import threading
from pathlib import Path

import certifi
import pytest

from links import outbound
from webhooks import sending

TLS = Path(__file__).parent / "tls"
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

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(TLS / "localhost.crt", TLS / "localhost.key")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_port
    server.shutdown()
    server.server_close()


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
