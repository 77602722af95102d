"""The webhooks page: a person's webhooks, their secrets, tests and delivery logs."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from core.forms import add_service_errors
from webhooks import selectors, services
from webhooks.forms import WebhookCreateForm
from webhooks.models import Webhook
from workspaces.current import can_write_current, current_workspace


@never_cache  # the page shows secrets: no copy of it in any cache
@login_required
@require_http_methods(["GET", "POST"])
def webhooks_page(request: HttpRequest) -> HttpResponse:
    workspace = current_workspace(request)
    form = WebhookCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            # A viewer's POST: PermissionDenied from the service, the 403 page.
            webhook = services.webhook_create(
                user=request.user,
                url=form.cleaned_data["url"],
                events=form.cleaned_data["events"],
                workspace=workspace,
            )
        except ValidationError as error:
            add_service_errors(form, error)
        else:
            messages.success(request, f"Added the webhook to {webhook.url}.")
            return redirect("webhooks")
    webhooks = [
        (webhook, selectors.webhook_deliveries(webhook=webhook))
        for webhook in selectors.webhook_list(user=request.user, workspace_id=workspace.pk)
    ]
    # A test just queued: the page reloads itself until its outcome is in the log.
    awaiting_test = any(
        delivery.is_test_waiting for _, deliveries in webhooks for delivery in deliveries
    )
    return render(
        request,
        "webhooks/webhooks.html",
        {
            "form": form,
            "webhooks": webhooks,
            "may_create": can_write_current(request),
            "awaiting_test": awaiting_test and request.method == "GET",
            "attempt_seconds": f"{settings.WEBHOOK_ATTEMPT_SECONDS:g}",
            "disable_after": settings.WEBHOOK_DISABLE_AFTER_FAILURES,
        },
    )


def _owned(request: HttpRequest, webhook_id: int) -> Webhook:
    try:
        return selectors.webhook_get(user=request.user, webhook_id=webhook_id)
    except Webhook.DoesNotExist:
        raise Http404("No such webhook.") from None


@login_required
@require_POST
def webhook_delete(request: HttpRequest, webhook_id: int) -> HttpResponse:
    webhook = _owned(request, webhook_id)
    services.webhook_delete(user=request.user, webhook_id=webhook.pk)
    messages.success(request, f"Deleted the webhook to {webhook.url}.")
    return redirect("webhooks")


@login_required
@require_POST
def webhook_toggle(request: HttpRequest, webhook_id: int) -> HttpResponse:
    """Pause an active webhook, or resume a paused one."""
    webhook = _owned(request, webhook_id)
    webhook = services.webhook_update(
        user=request.user, webhook_id=webhook.pk, is_active=not webhook.is_active
    )
    state = "resumed: it hears its events again" if webhook.is_active else "paused"
    messages.success(request, f"The webhook to {webhook.url} is {state}.")
    return redirect("webhooks")


@login_required
@require_POST
def webhook_test(request: HttpRequest, webhook_id: int) -> HttpResponse:
    """Queue a test: it is sent in the background, never on this request (a slow receiver
    would hold it); the page shows its outcome in the log when it comes."""
    webhook = _owned(request, webhook_id)
    services.webhook_send_test(user=request.user, webhook_id=webhook.pk)
    messages.info(
        request,
        f"Test queued for {webhook.url}: its outcome shows in the log below within seconds.",
    )
    return redirect("webhooks")
