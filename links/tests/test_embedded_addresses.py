"""An IPv6 address that carries a local IPv4 address is local, in every standard form (security
round 3, 12b): the link policy and the webhook targets judge it by one rule,
links.services.policy.embedded_ipv4."""

import pytest
from django.core.exceptions import ValidationError

from links.models import UrlLink
from links.services.create import link_create

pytestmark = pytest.mark.django_db

REQUEST_HOST = "s.example.com"


@pytest.fixture(autouse=True)
def _deployment(settings):
    settings.SHORT_URL_BASE = "https://s.example.com/"
    settings.ALLOWED_HOSTS = ["s.example.com", "testserver"]


@pytest.mark.parametrize(
    ("long_url", "named"),
    [
        ("http://[2002:7f00:1::]/x", "2002:7f00:1::"),  # 6to4 of 127.0.0.1
        ("http://[2002:7f00:1::1]:8080/x", "2002:7f00:1::1"),
        ("http://[2002::]/x", "2002::"),  # 6to4 of 0.0.0.0
        ("http://[64:ff9b::7f00:1]/x", "64:ff9b::7f00:1"),  # NAT64 of 127.0.0.1
        ("http://[::127.0.0.1]/x", "::127.0.0.1"),  # IPv4-compatible
        ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x", "2001:0:4136:e378:8000:63bf:80ff:fffe"),
    ],
)
def test_an_ipv6_address_carrying_a_local_ipv4_one_is_refused(user, long_url, named):
    with pytest.raises(ValidationError) as refused:
        link_create(user=user, long_url=long_url, request_host=REQUEST_HOST)
    assert refused.value.message_dict["long_url"] == [
        f"This URL points at a local address ({named}) that visitors cannot reach: "
        "on their devices it means their own machine."
    ]
    assert not UrlLink.objects.filter(long_url=long_url).exists()


@pytest.mark.parametrize(
    "long_url",
    [
        "http://[2002:808:808::]/x",  # 6to4 of 8.8.8.8
        "http://[64:ff9b::808:808]/x",
        "http://[::2]/x",
        "http://[2001:db8::1]/x",
    ],
)
def test_an_ipv6_address_carrying_a_public_ipv4_one_is_taken(user, long_url):
    assert link_create(user=user, long_url=long_url, request_host=REQUEST_HOST).created
