"""`GET /api/v1/audit/`: the audit log of the workspaces the caller owns (audit.selectors),
newest first, paginated; `?download=csv` for a download of the same entries."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination

from audit.channels import CHANNELS
from audit.selectors import CSV_ROWS_MAX, audit_csv_chunks, audit_entries, entry_shown
from core.api.base import validated
from core.api.docs import error_responses
from core.api.scopes import ApiScope
from core.csv_cells import csv_download
from workspaces.api.base import WorkspaceApiView
from workspaces.selectors import audit_workspace_ids


class AuditPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


class AuditQuerySerializer(serializers.Serializer):
    workspace = serializers.CharField(required=False, allow_blank=True)
    action = serializers.CharField(required=False, allow_blank=True, max_length=40)
    actor = serializers.CharField(required=False, allow_blank=True, max_length=150)
    object = serializers.CharField(required=False, allow_blank=True, max_length=200)
    since = serializers.DateField(required=False)
    until = serializers.DateField(required=False)
    download = serializers.ChoiceField(choices=["csv"], required=False)
    # Checked here so a malformed one is a 400 naming it, not ignored (the paginator reads them).
    page = serializers.IntegerField(
        required=False, min_value=1, error_messages={"invalid": "Use a page number (1, 2, …)."}
    )
    page_size = serializers.IntegerField(
        required=False,
        min_value=1,
        error_messages={"invalid": "Use a number of entries per page (at most 500)."},
    )


class AuditObjectSerializer(serializers.Serializer):
    type = serializers.CharField(help_text="link, domain, tag, api_key, webhook, workspace…")
    id = serializers.CharField()
    name = serializers.CharField(help_text="A link's code, a tag's name, a domain's host…")


class AuditEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    action = serializers.CharField(help_text="`<object type>.<verb>`, e.g. link.update.")
    channel = serializers.ChoiceField(choices=CHANNELS)
    actor = serializers.CharField(allow_null=True, help_text="The username; null for none.")
    at = serializers.DateTimeField()
    object = AuditObjectSerializer()
    changes = serializers.DictField(
        help_text="{field: [before, after]}; null for a side that had none; secrets masked."
    )


ENTRY_EXAMPLE = {
    "id": 812,
    "action": "link.update",
    "channel": "api",
    "actor": "ada",
    "at": "2026-03-01T09:30:00Z",
    "object": {"type": "link", "id": "4411", "name": "spring7"},
    "changes": {"title": ["Spring", "Spring sale"], "password_hash": [None, "••••••"]},
}


class AuditListView(WorkspaceApiView):
    serializer_class = AuditEntrySerializer
    pagination_class = AuditPagination
    read_scope = ApiScope.AUDIT_READ

    @extend_schema(
        tags=["audit"],
        operation_id="audit_list",
        summary="The audit log (owners)",
        description=(
            "Every change to the links, domains, tags, API keys, webhooks, members and name of "
            "the workspaces you own, newest first: who, when, through which channel (`web`, "
            "`api`, `compat`, `admin`, `command`) and the fields before and after. "
            "`?workspace=` one of them (403 unless you own it); an API key reads its own "
            "workspace's only, with the audit:read scope. `?download=csv` downloads the same "
            f"entries as CSV (at most {CSV_ROWS_MAX:,})."
        ),
        parameters=[
            OpenApiParameter("workspace", str, description="A workspace you own (its slug)."),
            OpenApiParameter(
                "action", str, description="An action (link.update) or a kind (link)."
            ),
            OpenApiParameter("actor", str, description="A username."),
            OpenApiParameter("object", str, description="An object's name or id (a link's code)."),
            OpenApiParameter("since", str, description="First day (YYYY-MM-DD), included."),
            OpenApiParameter("until", str, description="Last day (YYYY-MM-DD), included."),
            OpenApiParameter(
                "download", str, enum=["csv", ""], description="csv: a CSV download; empty: JSON."
            ),
        ],
        responses={
            (200, "application/json"): AuditEntrySerializer(many=True),
            # ?download=csv: the same entries as a spreadsheet (audit_csv_chunks' columns).
            (200, "text/csv"): OpenApiTypes.STR,
            **error_responses(400, 401, 403, 404, 429),
        },
        examples=[OpenApiExample("An entry", value=[ENTRY_EXAMPLE], response_only=True)],
    )
    def get(self, request):
        query = validated(AuditQuerySerializer, request.query_params)
        query.pop("page", None), query.pop("page_size", None)  # the paginator's
        download = query.pop("download", "")
        workspace_id = self.workspace_id_to_read(query.pop("workspace", ""))
        ids = audit_workspace_ids(user=request.user, workspace_id=workspace_id)
        entries = audit_entries(workspace_ids=ids, **query)
        if download == "csv":
            return csv_download(audit_csv_chunks(entries), "audit-log.csv")
        page = self.paginate_queryset(entries)
        return self.get_paginated_response(
            AuditEntrySerializer([entry_shown(entry) for entry in page], many=True).data
        )
