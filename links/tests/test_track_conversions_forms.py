"""Conversion tracking in the channels people use by hand (issue #29): the create form's
"Track conversions" box makes a link that tracks them, the edit form shows it ticked and unticks
it; the link admin shows it. The rule is link_create's and link_update's, as for the API."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from links.models import UrlLink
from links.services.create import link_create

pytestmark = pytest.mark.django_db

TARGET = "https://shop.example.com/spring"
FORM = {"long_url": TARGET, "redirect_type": "302", "pass_query": "on"}


def test_the_create_form_makes_a_link_that_tracks_conversions(client, user):
    client.force_login(user)
    page = client.get(reverse("home")).content.decode()
    assert 'name="track_conversions"' in page
    assert client.post(reverse("home"), {**FORM, "track_conversions": "on"}).status_code == 302
    link = UrlLink.objects.get(long_url=TARGET)
    assert link.track_conversions is True
    stats_page = client.get(reverse("link_stats", args=[link.code])).content.decode()
    assert 'data-testid="track-conversions"' in stats_page
    plain = {**FORM, "long_url": TARGET + "/plain"}
    assert client.post(reverse("home"), plain).status_code == 302
    assert UrlLink.objects.get(long_url=TARGET + "/plain").track_conversions is False


def test_the_edit_form_shows_it_and_switches_it_off(client, user, staff_user):
    client.force_login(user)
    link = link_create(user=user, long_url=TARGET, track_conversions=True).link
    url = reverse("link_edit", args=[link.code])
    page = client.get(url).content.decode()
    [box] = re.findall(r'<input[^>]*name="track_conversions"[^>]*>', page)
    assert "checked" in box
    assert client.post(url, {**FORM, "title": ""}).status_code == 302
    link.refresh_from_db()
    assert link.track_conversions is False
    client.force_login(staff_user)
    admin = client.get(reverse("admin:links_urllink_change", args=[link.pk])).content
    assert b"Track conversions" in admin
