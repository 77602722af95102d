"""LinkSerializer's own to_representation (quick enough for a thousand links per bulk answer)
gives exactly what ModelSerializer's generic one gives."""

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.test import RequestFactory
from django.utils import timezone
from rest_framework import serializers
from rest_framework.request import Request

from links.api.serializers.links import LinkSerializer
from links.models import RedirectType
from links.shortlinks import short_url_for
from links.tests.factories import UrlLinkFactory

pytestmark = pytest.mark.django_db


def _generic(serializer: LinkSerializer, link) -> dict:
    return dict(serializers.ModelSerializer.to_representation(serializer, link))


@pytest.fixture
def links(user):
    return [
        UrlLinkFactory(owner=user),
        UrlLinkFactory(owner=user, alias="spring_sale-1", title="Spring sale"),
        UrlLinkFactory(
            owner=user,
            redirect_type=RedirectType.PERMANENT_REDIRECT,
            expires_at=timezone.now() + timedelta(days=2),
        ),
        UrlLinkFactory(owner=user, expires_at=timezone.now() - timedelta(days=1)),
        UrlLinkFactory(owner=user, revoked_at=timezone.now()),
        UrlLinkFactory(owner=user, long_url="https://bücher.example/straße?q=ü"),
    ]


@pytest.mark.parametrize("base", ["", "https://s.example.com/", "https://s.example.com/go/"])
@pytest.mark.parametrize("with_request", [True, False])
def test_every_link_is_shown_as_model_serializer_shows_it(settings, links, base, with_request):
    settings.SHORT_URL_BASE = base
    settings.ALLOWED_HOSTS = ["short.test"]
    request = Request(RequestFactory().get("/api/v1/links/", HTTP_HOST="short.test:8443"))
    totals = {links[0].pk: {"clicks": 7}, links[1].pk: {"clicks": 0}}
    context = {"request": request if with_request else None, "totals": totals}
    serializer = LinkSerializer(context=context)

    for link in links:
        fast = serializer.to_representation(link)
        assert fast == _generic(serializer, link)
        assert list(fast) == LinkSerializer.Meta.fields
        assert fast["short_url"] == short_url_for(link.code, request=context["request"])
    assert LinkSerializer(links, many=True, context=context).data == [
        _generic(serializer, link) for link in links
    ]


def test_a_code_outside_the_generated_and_alias_shapes_still_gets_its_own_short_url(user):
    # Such codes can only come from outside the services (e.g. an import): the short URL is
    # still built the one way short_url_for builds it.
    link = UrlLinkFactory(owner=user, code="odd.code/x")
    request = Request(RequestFactory().get("/"))
    serializer = LinkSerializer(context={"request": request})

    assert serializer.to_representation(link) == _generic(serializer, link)
    assert serializer.to_representation(link)["short_url"] == "http://testserver/odd.code/x"


def test_links_made_together_share_one_formatted_creation_time(settings, user):
    settings.TIME_ZONE = "Europe/Paris"
    first, second, third = (UrlLinkFactory(owner=user) for _ in range(3))
    second.created_at = first.created_at.astimezone(ZoneInfo("Asia/Tokyo"))  # same instant
    third.created_at = first.created_at + timedelta(microseconds=1)
    serializer = LinkSerializer(context={"request": None})

    shown = [serializer.to_representation(link)["created_at"] for link in (first, second, third)]

    assert shown == [_generic(serializer, link)["created_at"] for link in (first, second, third)]
    assert shown[0] == shown[1] != shown[2]
