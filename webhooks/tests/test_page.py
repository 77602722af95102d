"""The webhooks page: add one (URL, events), see its secret, send a test, read the log, delete;
only one's own webhooks."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from webhooks import services
from webhooks.models import Webhook

pytestmark = pytest.mark.django_db

PUBLIC = "https://93.184.215.14/hook"


def test_the_page_needs_signing_in(client):
    response = client.get(reverse("webhooks"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_add_a_webhook_and_see_its_secret(client, user):
    client.force_login(user)
    page = client.get(reverse("webhooks"))
    assert page.status_code == 200 and "You have no webhooks yet." in page.text
    assert 'href="/dashboard/webhooks/"' in page.text  # in the navigation
    response = client.post(
        reverse("webhooks"), {"url": PUBLIC, "events": ["link.created", "link.clicked"]}
    )
    assert response.status_code == 302
    webhook = Webhook.objects.get(owner=user)
    assert webhook.events == ["link.created", "link.clicked"]
    page = client.get(reverse("webhooks"))
    assert webhook.secret in page.text and PUBLIC in page.text


def test_a_private_target_is_refused_on_the_form(client, user):
    client.force_login(user)
    response = client.post(
        reverse("webhooks"), {"url": "http://169.254.169.254/", "events": ["link.created"]}
    )
    assert response.status_code == 200
    assert "public addresses only" in response.text
    assert not Webhook.objects.exists()


def test_send_a_test_and_read_the_log(client, user, receiver):
    client.force_login(user)
    webhook = services.webhook_create(user=user, url=receiver.url, events=["link.created"])
    response = client.post(reverse("webhook_test", args=[webhook.pk]), follow=True)
    assert "Test queued for" in response.text
    assert 'data-delivery-event="ping"' in response.text  # pending in the log
    services.webhook_deliver_due()  # the webhooks' lane
    assert len(receiver.received) == 1
    assert "Succeeded" in client.get(reverse("webhooks")).text


def test_delete_and_others_webhooks(client, user, other_user):
    theirs = services.webhook_create(user=other_user, url=PUBLIC, events=["link.created"])
    mine = services.webhook_create(user=user, url=PUBLIC, events=["link.created"])
    client.force_login(user)
    page = client.get(reverse("webhooks"))
    assert theirs.secret not in page.text
    assert client.post(reverse("webhook_delete", args=[theirs.pk])).status_code == 404
    assert client.post(reverse("webhook_test", args=[theirs.pk])).status_code == 404
    assert client.post(reverse("webhook_delete", args=[mine.pk])).status_code == 302
    assert list(Webhook.objects.all()) == [theirs]


def test_forms_need_the_csrf_token(user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    webhook = services.webhook_create(user=user, url=PUBLIC, events=["link.created"])
    assert client.post(reverse("webhook_delete", args=[webhook.pk])).status_code == 403
    assert (
        client.post(reverse("webhooks"), {"url": PUBLIC, "events": ["link.created"]}).status_code
        == 403
    )


def test_staff_see_webhooks_and_deliveries_read_only_in_the_admin(admin_client, user):
    services.webhook_create(user=user, url=PUBLIC, events=["link.created"])
    listing = admin_client.get("/admin/webhooks/webhook/")
    assert listing.status_code == 200 and PUBLIC in listing.text
    assert admin_client.get("/admin/webhooks/webhookdelivery/").status_code == 200
    assert admin_client.get("/admin/webhooks/webhook/add/").status_code == 403


def test_a_test_is_queued_and_its_failure_shows_in_the_log(client, user, receiver):
    receiver.answers = [(500, "nope", 0.0)]
    client.force_login(user)
    webhook = services.webhook_create(user=user, url=receiver.url, events=["link.created"])
    response = client.post(reverse("webhook_test", args=[webhook.pk]), follow=True)
    assert "Test queued for" in response.text
    assert receiver.received == []  # never sent on the request
    assert '<meta http-equiv="refresh"' in response.text  # the page waits for the outcome
    services.webhook_deliver_due()  # the webhooks' lane
    response = client.get(reverse("webhooks"))
    assert "nope" in response.text  # the answer's excerpt in the log
    assert '<meta http-equiv="refresh"' not in response.text


def test_pause_and_resume(client, user, other_user):
    client.force_login(user)
    webhook = services.webhook_create(user=user, url=PUBLIC, events=["link.created"])
    response = client.post(reverse("webhook_toggle", args=[webhook.pk]), follow=True)
    assert "is paused" in response.text and "Paused" in response.text
    webhook.refresh_from_db()
    assert webhook.is_active is False
    response = client.post(reverse("webhook_toggle", args=[webhook.pk]), follow=True)
    assert "resumed" in response.text
    webhook.refresh_from_db()
    assert webhook.is_active is True
    theirs = services.webhook_create(user=other_user, url=PUBLIC, events=["link.created"])
    assert client.post(reverse("webhook_toggle", args=[theirs.pk])).status_code == 404
