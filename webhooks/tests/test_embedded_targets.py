"""A webhook target whose IPv6 address carries a loopback or private IPv4 address is refused
like the IPv4 address itself (security round 3, 12b: `[2002:7f00:1::]`, 6to4 of 127.0.0.1, was
taken). The rule is the link policy's own (links.services.policy.embedded_ipv4)."""

import pytest
from django.core.exceptions import ValidationError

from webhooks import services
from webhooks.models import Webhook

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        "http://[2002:7f00:1::]/hook",  # 6to4 of 127.0.0.1: the audit's case
        "http://[2002:7f00:1::]:8000/hook",
        "http://[2002:a00:5::1]/hook",  # 6to4 of 10.0.0.5
        "http://[2002:a9fe:a9fe::]/latest/meta-data/",  # 6to4 of 169.254.169.254
        "http://[2002:c0a8:101::]/hook",  # 6to4 of 192.168.1.1
        "http://[64:ff9b::7f00:1]/hook",  # NAT64 of 127.0.0.1
        "http://[::127.0.0.1]/hook",  # IPv4-compatible
        "http://[::ffff:10.0.0.5]/hook",
    ],
)
def test_an_ipv6_target_carrying_a_local_or_private_ipv4_address_is_refused(user, url):
    with pytest.raises(ValidationError) as refused:
        services.webhook_create(user=user, url=url, events=["link.created"])
    message = refused.value.message_dict["url"][0]
    assert "webhooks" in message and ("public addresses only" in message or "machine" in message)
    assert not Webhook.objects.filter(url=url).exists()


def test_a_6to4_target_carrying_a_public_address_is_still_taken(user):
    url = "http://[2002:5db8:d70e::1]/hook"  # 6to4 of 93.184.215.14
    assert services.webhook_create(user=user, url=url, events=["link.created"]).url == url
