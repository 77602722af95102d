"""A local HTTPS server for the outbound tests (webhook deliveries, destination checks): the
handler a test gives, behind the self-signed certificate for `localhost` in tls/, which no
client trusts unless the test says so."""

from __future__ import annotations

import contextlib
import http.server
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

TLS = Path(__file__).resolve().parent / "tls"


@contextlib.contextmanager
def served_over_tls(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[int]:
    """`handler` answering HTTPS on 127.0.0.1 and a free port until the block ends; yields the
    port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(TLS / "localhost.crt", TLS / "localhost.key")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
        server.server_close()
