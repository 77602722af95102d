"""The webhooks API: a person's own webhooks, their deliveries, and a test ping.

An API key needs webhooks:write for every call here, reads included: a webhook's answer carries
its secret, which signs what its receiver trusts.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from core.api.base import validated
from core.api.docs import error_responses
from core.api.scopes import ApiScope
from webhooks import selectors, services
from webhooks.api.serializers import (
    WebhookCreateSerializer,
    WebhookDeliverySerializer,
    WebhookListQuerySerializer,
    WebhookSerializer,
    WebhookUpdateSerializer,
)
from webhooks.models import Webhook
from workspaces.api.base import WorkspaceApiView

TAGS = ["webhooks"]
SCOPE_REFUSED = {
    403: OpenApiResponse(
        description="An API key without the webhooks:write scope (the message names it), or "
        "a viewer of the webhook's workspace changing it."
    )
}


def _errors(*codes: int) -> dict:
    return {**error_responses(*(code for code in codes if code != 403)), **SCOPE_REFUSED}


class _WebhookView(WorkspaceApiView):
    serializer_class = WebhookSerializer
    pagination_class = None  # at most 20 webhooks, the last 20 deliveries: plain lists
    read_scope = ApiScope.WEBHOOKS_WRITE

    def required_scope(self, request) -> str:
        return ApiScope.WEBHOOKS_WRITE

    def get_webhook(self, webhook_id: int) -> Webhook:
        """A webhook of the caller's workspaces (an API key: of its own workspace); 404 for
        unknown ids and for others' (never 403)."""
        try:
            return selectors.webhook_get(
                user=self.request.user,
                webhook_id=webhook_id,
                workspace_id=self.pinned_workspace_id,
            )
        except Webhook.DoesNotExist:
            raise NotFound("No webhook of yours has this id.") from None


class WebhookListCreateView(_WebhookView):
    @extend_schema(
        tags=TAGS,
        operation_id="webhooks_list",
        summary="Your webhooks",
        description="The webhooks of every workspace you belong to, or of one (`workspace`).",
        parameters=[WebhookListQuerySerializer],
        responses={200: WebhookSerializer(many=True), **_errors(400, 401, 403, 404, 429)},
    )
    def get(self, request):
        query = validated(WebhookListQuerySerializer, request.query_params.dict())
        workspace_id = self.workspace_id_to_read(query.get("workspace"))
        webhooks = selectors.webhook_list(user=request.user, workspace_id=workspace_id)
        return Response(WebhookSerializer(webhooks, many=True).data)

    @extend_schema(
        tags=TAGS,
        operation_id="webhooks_create",
        summary="Add a webhook",
        description="Its secret is made here and returned; use it to check each signature.",
        request=WebhookCreateSerializer,
        responses={201: WebhookSerializer, **_errors(400, 401, 403, 429)},
    )
    def post(self, request):
        data = validated(WebhookCreateSerializer, request.data)
        data["workspace"] = data.get("workspace") or None
        webhook = services.webhook_create(
            user=request.user, pinned_workspace_id=self.pinned_workspace_id, **data
        )
        return Response(WebhookSerializer(webhook).data, status=status.HTTP_201_CREATED)


class WebhookDetailView(_WebhookView):
    @extend_schema(
        tags=TAGS,
        operation_id="webhooks_get",
        summary="One webhook",
        responses={200: WebhookSerializer, **_errors(401, 403, 404, 429)},
    )
    def get(self, request, webhook_id: int):
        return Response(WebhookSerializer(self.get_webhook(webhook_id)).data)

    @extend_schema(
        tags=TAGS,
        operation_id="webhooks_update",
        summary="Change a webhook (URL, events, paused or not)",
        request=WebhookUpdateSerializer,
        responses={200: WebhookSerializer, **_errors(400, 401, 403, 404, 429)},
    )
    def patch(self, request, webhook_id: int):
        webhook = self.get_webhook(webhook_id)  # 404 before 400
        data = validated(WebhookUpdateSerializer, request.data)
        webhook = services.webhook_update(user=request.user, webhook_id=webhook.pk, **data)
        return Response(WebhookSerializer(webhook).data)

    @extend_schema(
        tags=TAGS,
        operation_id="webhooks_delete",
        summary="Delete a webhook and its delivery log",
        responses={204: OpenApiResponse(description="Deleted."), **_errors(401, 403, 404, 429)},
    )
    def delete(self, request, webhook_id: int):
        webhook = self.get_webhook(webhook_id)
        services.webhook_delete(user=request.user, webhook_id=webhook.pk)
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookDeliveriesView(_WebhookView):
    serializer_class = WebhookDeliverySerializer

    @extend_schema(
        tags=TAGS,
        operation_id="webhooks_deliveries",
        summary="A webhook's last deliveries, newest first",
        responses={200: WebhookDeliverySerializer(many=True), **_errors(401, 403, 404, 429)},
    )
    def get(self, request, webhook_id: int):
        deliveries = selectors.webhook_deliveries(webhook=self.get_webhook(webhook_id))
        return Response(WebhookDeliverySerializer(deliveries, many=True).data)


class WebhookTestView(_WebhookView):
    serializer_class = WebhookDeliverySerializer

    @extend_schema(
        tags=TAGS,
        operation_id="webhooks_test",
        summary="Queue a test (a `ping` event)",
        description="Answers at once (202) with the queued delivery, `pending`; it is attempted "
        "within seconds, and its outcome is in the webhook's deliveries (look it up by "
        "`event_id`). A failed ping is retried like any delivery.",
        request=None,
        responses={202: WebhookDeliverySerializer, **_errors(401, 403, 404, 429)},
    )
    def post(self, request, webhook_id: int):
        webhook = self.get_webhook(webhook_id)
        delivery = services.webhook_send_test(user=request.user, webhook_id=webhook.pk)
        return Response(WebhookDeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)
