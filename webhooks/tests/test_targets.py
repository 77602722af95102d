"""SSRF: webhooks are sent to public http(s) addresses only, checked when saved and again right
before each send, unless SHORTURL_WEBHOOK_ALLOW_PRIVATE is on."""

from __future__ import annotations

import socket

import pytest
from django.core.exceptions import ValidationError

from links import outbound
from links.services.create import link_create
from webhooks import sending, services
from webhooks.models import WebhookDelivery

pytestmark = pytest.mark.django_db

PUBLIC = "https://93.184.215.14/hook"


def _resolving(monkeypatch, table: dict[str, list[str]]) -> None:
    real = socket.getaddrinfo

    def fake(host, port, *args, **kwargs):
        if host in table:
            return [
                (
                    socket.AF_INET6 if ":" in a else socket.AF_INET,
                    socket.SOCK_STREAM,
                    6,
                    "",
                    (a, port),
                )
                for a in table[host]
            ]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)


def _refusal(user, url: str) -> str:
    with pytest.raises(ValidationError) as refused:
        services.webhook_create(user=user, url=url, events=["link.created"])
    return refused.value.message_dict["url"][0]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "http://127.1.2.3:8080/hook",
        "http://10.0.0.5/hook",
        "http://192.168.1.1/hook",
        "http://172.16.0.1/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/hook",
        "http://[fd00::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://0.0.0.0/hook",
        "http://224.0.0.1/hook",
        "http://localhost:9000/hook",
        "http://api.localhost/hook",
    ],
)
def test_loopback_private_and_link_local_targets_are_refused(user, url):
    assert "webhooks" in _refusal(user, url)


def test_a_name_resolving_to_a_private_address_is_refused(user, monkeypatch):
    _resolving(monkeypatch, {"hooks.example.com": ["93.184.215.14", "10.1.2.3"]})
    assert "10.1.2.3" in _refusal(user, "https://hooks.example.com/in")


def test_only_http_and_https_urls_are_taken(user):
    assert "http" in _refusal(user, "ftp://93.184.215.14/hook")
    assert "http" in _refusal(user, "file:///etc/passwd")


def test_a_public_address_is_taken(user):
    webhook = services.webhook_create(user=user, url=PUBLIC, events=["link.created"])
    assert webhook.url == PUBLIC and webhook.secret.startswith("whsec_")


def test_the_setting_lets_private_targets_through(user, settings):
    settings.SHORTURL_WEBHOOK_ALLOW_PRIVATE = True
    webhook = services.webhook_create(
        user=user, url="http://127.0.0.1:9/h", events=["link.created"]
    )
    assert webhook.url == "http://127.0.0.1:9/h"


def test_a_name_that_later_resolves_to_loopback_is_not_called(
    user, monkeypatch, django_capture_on_commit_callbacks
):
    """DNS rebinding: public when saved, loopback when the delivery is due."""
    _resolving(monkeypatch, {"rebind.example.com": ["93.184.215.14"]})
    services.webhook_create(
        user=user, url="http://rebind.example.com/hook", events=["link.created"]
    )
    _resolving(monkeypatch, {"rebind.example.com": ["127.0.0.1"]})
    posted = []
    monkeypatch.setattr(outbound, "open_pinned", lambda *args, **kw: posted.append(args))
    with django_capture_on_commit_callbacks(execute=True):
        link_create(user=user, long_url="https://example.com/rebind")
    assert services.webhook_deliver_due() == 1
    delivery = WebhookDelivery.objects.get()
    assert posted == []
    assert "127.0.0.1" in delivery.error and delivery.status == "pending"


class _Answer:
    status = 200

    def read(self, *args, **kwargs):
        return b"ok"

    def release_conn(self):
        pass


def test_the_post_connects_to_the_address_just_checked_not_a_fresh_lookup(user, monkeypatch):
    """DNS rebinding within an attempt: the check sees a public address; a second lookup would
    see loopback. The connection goes to the checked address, speaking to it by name."""
    _resolving(monkeypatch, {"rebind.example.com": ["93.184.215.14"]})
    webhook = services.webhook_create(
        user=user, url="https://rebind.example.com:8443/in?x=1", events=["link.created"]
    )
    answers = iter([["93.184.215.14"]])
    monkeypatch.setattr(outbound, "resolve", lambda host, port, **kw: next(answers, ["127.0.0.1"]))
    opened = []

    class Pool:
        def __init__(self, scheme, address, port, host, deadline):
            opened.append((scheme, address, port, host))

        def urlopen(self, method, target, *, headers, **kwargs):
            opened.append((method, target, headers["Host"]))
            return _Answer()

    monkeypatch.setattr(outbound, "pinned_pool", Pool)
    result = sending.post(
        url=webhook.url, secret=webhook.secret, payload={"id": "1", "event": "ping"}
    )
    assert result.delivered
    assert opened == [
        ("https", "93.184.215.14", 8443, "rebind.example.com"),
        ("POST", "/in?x=1", "rebind.example.com:8443"),
    ]
