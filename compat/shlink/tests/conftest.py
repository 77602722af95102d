"""Fixtures the Shlink layer's list tests share (test_shlink_list.py, and the SDK's in
test_shlink_sdk.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from analytics.tests.factories import add_visits
from links.models import UrlLink
from links.services.create import link_create


@pytest.fixture
def four(user) -> dict[str, UrlLink]:
    """Four links, made in this order, told apart by every order (each gives another sequence):
    codes, long URLs and titles in mixed case, people's and bots' clicks. Made 10 days, 2 days,
    2 hours and a moment ago; A carries the tags sale and red, B sale, C red, D none."""
    now = timezone.now()
    made = {}
    for name, code, url, title, people, bots, tags, age in [
        ("A", "k-a", "https://example.com/Zebra", "banana", 1, 5, ["sale", "red"], 240),
        ("B", "z-b", "https://example.com/apple", "Cherry", 3, 0, ["sale"], 48),
        ("C", "a-c", "https://example.com/mango", "", 2, 0, ["red"], 2),
        ("D", "p-d", "https://example.com/kiwi", "apricot", 0, 4, [], 0),
    ]:
        link = link_create(
            user=user, long_url=url, alias=code, title=title or None, tags=tags or None
        ).link
        if age:
            UrlLink.objects.filter(pk=link.pk).update(created_at=now - timedelta(hours=age))
        if people:
            add_visits(link, people)
        if bots:
            add_visits(link, bots, bot=True)
        made[name] = link
    return made
