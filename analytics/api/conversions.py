"""POST /api/v1/track/lead and /api/v1/track/sale: a site's server reports a conversion of a click
(analytics.services.conversions holds every rule; these views only translate)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from analytics import services
from analytics.models import Conversion
from core.api.docs import RETRY_AFTER, error_responses
from core.api.scopes import ApiScope
from links.models import CLICK_ID_PARAM
from workspaces.api.base import WorkspaceApiView

_CLICK_ID_HELP = (
    f"The click's id: the `{CLICK_ID_PARAM}` query parameter the redirect added to your page's "
    "address (32 hexadecimal digits), or `window.shorturl.clickId()` of the snippet."
)
_METADATA_HELP = "Anything of yours to keep with it: a JSON object of at most 4096 bytes."


class LeadInSerializer(serializers.Serializer):
    """What the schema shows, and which body fields go to the service (_TrackView.track, as its
    keyword arguments of the same names); the checks are the service's (400 naming the field)."""

    click_id = serializers.CharField(help_text=_CLICK_ID_HELP)
    event_name = serializers.CharField(
        max_length=100, help_text="What happened, e.g. `Sign up` (a lead counts once per name)."
    )
    customer_id = serializers.CharField(
        max_length=100,
        help_text="Your id of the person: a later sale may name them instead of the click.",
    )
    metadata = serializers.JSONField(required=False, help_text=_METADATA_HELP)


class SaleInSerializer(serializers.Serializer):
    click_id = serializers.CharField(
        required=False, help_text=f"{_CLICK_ID_HELP} Or leave it out and send `customer_id`."
    )
    customer_id = serializers.CharField(
        required=False,
        max_length=100,
        help_text="Without `click_id`: the sale goes to the click of this customer's latest lead.",
    )
    amount = serializers.IntegerField(
        min_value=0, help_text="In the currency's minor units: 1999 for 19.99 EUR, 500 for 500 JPY."
    )
    currency = serializers.CharField(min_length=3, max_length=3, help_text="ISO 4217, e.g. EUR.")
    event_name = serializers.CharField(max_length=100, help_text="e.g. `Purchase`.")
    invoice_id = serializers.CharField(
        required=False,
        max_length=100,
        help_text="Your order's id: a sale with an invoice id already reported in this "
        "workspace counts once (the answer is the first one, `duplicate: true`).",
    )
    metadata = serializers.JSONField(required=False, help_text=_METADATA_HELP)


class ConversionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=["lead", "sale"])
    duplicate = serializers.BooleanField(
        help_text="True: reported before; this is the conversion stored then, counted once."
    )
    code = serializers.CharField(help_text="The short link the click was on.")
    click_id = serializers.CharField()
    event_name = serializers.CharField()
    customer_id = serializers.CharField()
    amount = serializers.IntegerField(help_text="Minor units; 0 for a lead.")
    currency = serializers.CharField(help_text="'' for a lead.")
    invoice_id = serializers.CharField()
    metadata = serializers.JSONField()
    created_at = serializers.DateTimeField()


def _body(result: services.ConversionResult) -> dict:
    conversion: Conversion = result.conversion
    return ConversionSerializer(
        {
            "id": conversion.pk,
            "kind": conversion.kind,
            "duplicate": not result.created,
            "code": conversion.link.code,
            "click_id": conversion.click_id,
            "event_name": conversion.event_name,
            "customer_id": conversion.customer_id,
            "amount": conversion.amount,
            "currency": conversion.currency,
            "invoice_id": conversion.invoice_id,
            "metadata": conversion.metadata,
            "created_at": conversion.created_at,
        }
    ).data


LEAD_EXAMPLE = {
    "id": 17,
    "kind": "lead",
    "duplicate": False,
    "code": "spring-sale",
    "click_id": "4f1c0de2a9b84c1e9d2f6a7b3c5e8d10",
    "event_name": "Sign up",
    "customer_id": "cus_8812",
    "amount": 0,
    "currency": "",
    "invoice_id": "",
    "metadata": {"plan": "trial"},
    "created_at": "2026-03-01T09:31:02Z",
}
SALE_EXAMPLE = {
    **LEAD_EXAMPLE,
    "id": 18,
    "kind": "sale",
    "event_name": "Purchase",
    "amount": 4990,
    "currency": "EUR",
    "invoice_id": "INV-2026-0042",
    "metadata": {},
}
_ERRORS = error_responses(400, 401, 403, 404, 429)
_DESCRIPTION_END = (
    " 201 for a new conversion, 200 with `duplicate: true` for a repeat. A click id that no "
    "stored click has, or one of a link in a workspace you do not write in, is a 404. An API key "
    "needs the `conversions:write` scope."
)


class _TrackView(WorkspaceApiView):
    # Both endpoints write; a key made for a site's server needs this scope alone.
    def required_scope(self, request) -> str:
        return ApiScope.CONVERSIONS_WRITE

    def track(self, request, report) -> Response:
        """Call `report` (services.lead_track or sale_track) with the body's fields, those the
        schema's serializer names (unchecked: the service checks them), and answer its row."""
        if not isinstance(request.data, dict):
            raise ValidationError({"non_field_errors": ["Send a JSON object."]})
        fields = {name: request.data.get(name) for name in self.serializer_class().fields}
        result = report(user=request.user, pinned_workspace_id=self.pinned_workspace_id, **fields)
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        return Response(_body(result), status=code)


class LeadTrackView(_TrackView):
    serializer_class = LeadInSerializer

    @extend_schema(
        tags=["conversions"],
        operation_id="track_lead",
        summary="Report a lead",
        description="Count a lead (a sign-up, a form sent) for the click `click_id`, once per "
        "click and event name." + _DESCRIPTION_END,
        request=LeadInSerializer,
        parameters=[RETRY_AFTER],
        responses={201: ConversionSerializer, 200: ConversionSerializer, **_ERRORS},
        examples=[
            OpenApiExample("A new lead", value=LEAD_EXAMPLE, response_only=True),
            OpenApiExample(
                "Unknown click",
                value={
                    "detail": "No click has the id '…' (…) among the links you can report "
                    "conversions for."
                },
                response_only=True,
                status_codes=["404"],
            ),
        ],
    )
    def post(self, request):
        return self.track(request, services.lead_track)


class SaleTrackView(_TrackView):
    serializer_class = SaleInSerializer

    @extend_schema(
        tags=["conversions"],
        operation_id="track_sale",
        summary="Report a sale",
        description="Count a sale of `amount` minor units of `currency` for the click "
        "`click_id`, or for the click of `customer_id`'s latest lead; once per `invoice_id` "
        "in a workspace." + _DESCRIPTION_END,
        request=SaleInSerializer,
        parameters=[RETRY_AFTER],
        responses={201: ConversionSerializer, 200: ConversionSerializer, **_ERRORS},
        examples=[OpenApiExample("A new sale", value=SALE_EXAMPLE, response_only=True)],
    )
    def post(self, request):
        return self.track(request, services.sale_track)
