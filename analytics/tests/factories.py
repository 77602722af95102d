"""Visits as the pipeline would have stored them, for tests of pages, the API and the admin."""

from __future__ import annotations

import uuid

import factory
from django.utils import timezone

from analytics.models import VisitRecord, utc_hour
from analytics.services import aggregate_hourly
from links.tests.factories import UrlLinkFactory


class VisitRecordFactory(factory.django.DjangoModelFactory):
    """A stored visit: by default a person on Chrome/Linux in Berlin, a new person each time.

    `bot=True` makes a Googlebot visit. Hourly counts are not touched: use add_visits, or call
    analytics.services.aggregate_hourly, when a page reads them.
    """

    class Meta:
        model = VisitRecord

    class Params:
        bot = factory.Trait(
            is_bot=True,
            browser_type="Googlebot",
            device_type="Bot",
            bot_name="Googlebot",
            bot_kind="search",
        )

    link = factory.SubFactory(UrlLinkFactory)
    code = factory.SelfAttribute("link.code")
    event_id = factory.LazyFunction(lambda: uuid.uuid4().hex)
    client_id = factory.LazyFunction(lambda: uuid.uuid4().hex)
    visit_time = factory.LazyFunction(timezone.now)
    browser_type = "Chrome"
    os_type = "Linux"
    device_type = "PC"
    country = "Germany"
    country_code = "DE"
    province = "Land Berlin"
    city = "Berlin"
    is_bot = False


def add_visits(link, count: int = 1, *, when=None, bot: bool = False, **fields) -> list:
    """Store `count` visits of `link` (each a different person unless `client_id` is given) and
    recompute their hour, as the pipeline would. Returns the visits, oldest pk first."""
    when = when or timezone.now()
    visits = VisitRecordFactory.create_batch(count, link=link, visit_time=when, bot=bot, **fields)
    aggregate_hourly(pairs=[(link.pk, utc_hour(when))])
    return sorted(visits, key=lambda visit: visit.pk)
