"""Erasure and access requests (docs/privacy.md): one visitor's raw visits across a workspace
erased or exported, a link's raw visits erased. Every count they made is kept
(analytics.services.retention); only the workspace's owners may (the services check)."""

from __future__ import annotations

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from analytics import selectors, services
from core.api.base import validated
from core.api.docs import error_responses
from core.api.scopes import ApiScope
from links.api.base import LinkApiView
from links.api.docs import CODE_PARAMETER, DOMAIN_PARAMETER
from workspaces.selectors import manage_required

TAGS = ["privacy"]
SLUG_PARAMETER = OpenApiParameter(
    "slug", str, OpenApiParameter.PATH, description="The workspace's slug."
)
_IP_HELP = (
    "The visitor's IP address as stored: in the truncated privacy mode its stored prefix; in "
    "the none mode nothing is stored, so erase by `visitor`."
)
_VISITOR_HELP = "The visitor id (client_id) of their visits, as exports and the admin show it."


class VisitorSerializer(serializers.Serializer):
    """Exactly one of the two; the rule is the selector's (400 naming `ip`)."""

    ip = serializers.CharField(required=False, allow_blank=True, max_length=45, help_text=_IP_HELP)
    visitor = serializers.CharField(
        required=False, allow_blank=True, max_length=40, help_text=_VISITOR_HELP
    )


class VisitorExportQuerySerializer(VisitorSerializer):
    output = serializers.ChoiceField(
        choices=["json", "csv"], required=False, default="json", help_text="json or csv."
    )


class ErasedSerializer(serializers.Serializer):
    visits = serializers.IntegerField(help_text="Raw visits deleted.")
    links = serializers.IntegerField(help_text="How many links they were of.")


ERASED_EXAMPLE = OpenApiExample("Erased", value={"visits": 3, "links": 2}, response_only=True)


class WorkspaceErasureView(LinkApiView):
    serializer_class = VisitorSerializer  # what OPTIONS describes (DRF's metadata asks for it)

    @extend_schema(
        tags=TAGS,
        operation_id="workspaces_erasure",
        summary="Erase one visitor's raw visits (owners)",
        description=(
            "Deletes every raw visit of one visitor (by `ip` or by `visitor`) to the workspace's "
            "links, and replaces their visitor id where unique visitors are counted: nothing "
            "stored names them afterwards. Every total, unique visitor count, chart and "
            "breakdown keeps its figure. Answers what was deleted."
        ),
        parameters=[SLUG_PARAMETER],
        request=VisitorSerializer,
        responses={200: ErasedSerializer, **error_responses(400, 401, 403, 404, 429)},
        examples=[ERASED_EXAMPLE],
    )
    def post(self, request, slug: str):
        workspace = self.workspace_named(slug)  # 404 for one the caller is not in
        data = validated(VisitorSerializer, request.data)
        deleted = services.visitor_visits_erase(workspace=workspace, by=request.user, **data)
        return Response(ErasedSerializer(deleted.as_dict()).data)


class WorkspaceVisitorDataView(LinkApiView):
    read_scope = ApiScope.STATS_READ

    @extend_schema(
        tags=TAGS,
        operation_id="workspaces_visitor_data",
        summary="Export one visitor's raw visits (owners)",
        description=(
            "Every stored column of every raw visit of one visitor (by `ip` or `visitor`) to "
            "the workspace's links, oldest first, for an access request: JSON "
            "`{count, visits}`, or CSV with `?output=csv`."
        ),
        parameters=[SLUG_PARAMETER, VisitorExportQuerySerializer],
        responses={
            (200, "application/json"): dict,
            (200, "text/csv"): OpenApiTypes.STR,  # ?output=csv
            **error_responses(400, 401, 403, 404, 429),
        },
    )
    def get(self, request, slug: str):
        workspace = self.workspace_named(slug)
        manage_required(user=request.user, workspace=workspace)
        query = validated(VisitorExportQuerySerializer, request.query_params.dict())
        output = query.pop("output")
        rows = selectors.visitor_visits_export(workspace=workspace, **query)
        if output == "csv":
            answer = StreamingHttpResponse(
                selectors.visitor_visits_csv_chunks(rows), content_type="text/csv; charset=utf-8"
            )
            answer["Content-Disposition"] = f'attachment; filename="visitor-{workspace.slug}.csv"'
            return answer
        visits = list(rows)
        return Response({"count": len(visits), "visits": visits})


class LinkRawVisitsView(LinkApiView):
    @extend_schema(
        tags=TAGS,
        operation_id="links_raw_visits_erase",
        summary="Erase a link's raw visits, keeping its counts (owners)",
        description=(
            "Deletes every stored raw visit of the link (IPs, user agents, referrers…); its "
            "totals, unique visitors, charts and breakdowns keep their figures. (The Shlink "
            "layer's DELETE …/visits deletes the counts too.)"
        ),
        parameters=[CODE_PARAMETER, DOMAIN_PARAMETER],
        responses={200: ErasedSerializer, **error_responses(401, 403, 404, 429)},
        examples=[ERASED_EXAMPLE],
    )
    def delete(self, request, code: str):
        link = self.get_link(code)  # 404 first: others' codes cannot be probed
        deleted = services.link_raw_visits_erase(link=link, by=request.user)
        return Response(ErasedSerializer(deleted.as_dict()).data)
