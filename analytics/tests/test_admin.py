"""Admin for staff: raw visits, hourly counts and conversions, read-only, with filters and a
chart."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from analytics.models import Conversion, ConversionKind, HourlyClick, VisitRecord
from analytics.tests.factories import add_visits
from links.services.create import link_create

pytestmark = pytest.mark.django_db

VISITS = reverse("admin:analytics_visitrecord_changelist")
HOURLY = reverse("admin:analytics_hourlyclick_changelist")


@pytest.fixture
def link(user):
    return link_create(user=user, long_url="https://example.com/a", alias="visited-link").link


def test_visits_are_read_only(admin_client, link):
    add_visits(link, 1)
    visit = VisitRecord.objects.get()
    assert admin_client.get(reverse("admin:analytics_visitrecord_add")).status_code == 403
    change = admin_client.get(reverse("admin:analytics_visitrecord_change", args=[visit.pk]))
    assert change.status_code == 200
    assert 'name="_save"' not in change.content.decode()
    delete = reverse("admin:analytics_visitrecord_delete", args=[visit.pk])
    assert admin_client.get(delete).status_code == 403


def test_visit_filters_and_date_hierarchy(admin_client, link):
    add_visits(link, 2, browser_type="Firefox")
    add_visits(link, 1, country="Kenya", browser_type="Googlebot", device_type="Bot", is_bot=True)
    add_visits(link, 1, channel="qr")
    html = admin_client.get(VISITS).content.decode()
    labels = ("By is bot", "By came through", "By device type", "By browser type", "By country")
    for label in labels:
        assert label in html
    assert 'class="toplinks"' in html  # the date hierarchy

    def count(**params):
        return len(admin_client.get(VISITS, params).context["cl"].result_list)

    assert count(is_bot__exact="1") == 1
    assert count(country="Kenya") == 1
    assert count(device_type__exact="PC") == 3
    assert count(browser_type="Firefox") == 2
    assert count(channel__exact="qr") == 1
    today = timezone.localdate()
    assert count(visit_time__year=today.year) == 4


def test_visit_changelist_query_count_does_not_grow(
    admin_client, link, django_assert_max_num_queries
):
    def count_queries():
        with django_assert_max_num_queries(40) as captured:
            assert admin_client.get(VISITS).status_code == 200
        return len(captured.captured_queries)

    add_visits(link, 1)
    few = count_queries()
    other = link_create(user=link.owner, long_url="https://example.com/b").link
    add_visits(other, 30)
    add_visits(link, 30, country="Chile", country_code="CL")
    assert count_queries() == few


def test_hourly_list_is_read_only_with_a_chart_above(admin_client, link):
    add_visits(link, 3)
    add_visits(link, 2, when=timezone.now() - dt.timedelta(hours=5))
    response = admin_client.get(HOURLY)
    assert response.status_code == 200
    chart = response.context["chart"]
    assert sum(chart["clicks"]) == 5
    html = response.content.decode()
    assert 'id="admin-chart-data"' in html
    assert html.index('id="admin-chart-data"') < html.index('id="result_list"')
    row = HourlyClick.objects.first()
    change = admin_client.get(reverse("admin:analytics_hourlyclick_change", args=[row.pk]))
    assert 'name="_save"' not in change.content.decode()
    assert admin_client.get(reverse("admin:analytics_hourlyclick_add")).status_code == 403


def test_hourly_chart_follows_the_search(admin_client, link):
    other = link_create(user=link.owner, long_url="https://example.com/b", alias="other-link").link
    add_visits(link, 3)
    add_visits(other, 7)
    response = admin_client.get(HOURLY, {"q": "other-link"})
    assert sum(response.context["chart"]["clicks"]) == 7


def test_hourly_list_empty_state(admin_client):
    response = admin_client.get(HOURLY)
    assert response.status_code == 200
    assert "No clicks in this period." in response.content.decode()


def test_hourly_changelist_query_count_does_not_grow(
    admin_client, link, django_assert_max_num_queries
):
    def count_queries():
        with django_assert_max_num_queries(40) as captured:
            admin_client.get(HOURLY)
        return len(captured.captured_queries)

    add_visits(link, 1)
    few = count_queries()
    for hours_ago in range(1, 20):
        add_visits(link, 1, when=timezone.now() - dt.timedelta(hours=hours_ago))
    assert count_queries() == few


def test_non_staff_cannot_open_visits(client, user):
    client.force_login(user)
    response = client.get(VISITS)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_conversions_are_listed_read_only_and_found_by_customer_or_invoice(admin_client, link):
    now = timezone.now()
    common = {"link": link, "workspace_id": link.workspace_id, "click_id": "c1" * 16}
    Conversion.objects.create(
        kind=ConversionKind.LEAD,
        event_name="Sign up",
        customer_id="cus_1",
        created_at=now,
        **common,
    )
    sale = Conversion.objects.create(
        kind=ConversionKind.SALE,
        event_name="Purchase",
        customer_id="cus_1",
        amount=4990,
        currency="EUR",
        invoice_id="INV-7",
        created_at=now,
        **common,
    )
    conversions = reverse("admin:analytics_conversion_changelist")

    html = admin_client.get(conversions).content.decode()
    assert "49.90 EUR" in html and "visited-link" in html and "Sign up" in html
    found = admin_client.get(conversions, {"q": "INV-7"}).content.decode()
    assert "Purchase" in found and "Sign up" not in found
    assert admin_client.get(reverse("admin:analytics_conversion_add")).status_code == 403
    change = admin_client.get(reverse("admin:analytics_conversion_change", args=[sale.pk]))
    assert change.status_code == 200 and 'name="_save"' not in change.content.decode()
