"""GET /api/v1/links/{code}/stats/: a link's hourly series and breakdowns; …/stats/live: its
totals while clicks come in; GET /api/v1/tags/{tag}/stats/: a tag's."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework.response import Response

from analytics.api.serializers import (
    LinkStatsSerializer,
    LiveQuerySerializer,
    LiveStatsSerializer,
    StatsQuerySerializer,
    TagStatsSerializer,
    WorkspaceStatsSerializer,
)
from analytics.models import utc_hour
from analytics.selectors import link_stats, links_stats, live_totals, workspace_stats
from core.api.base import validated
from core.api.docs import RETRY_AFTER, error_responses
from core.api.scopes import ApiScope
from links.api.base import LinkApiView
from links.api.docs import CODE_PARAMETER, DOMAIN_PARAMETER
from links.selectors import tag_get

STATS_EXAMPLE = {
    "code": "aZ3kP9q",
    "start": "2026-03-01T00:00:00Z",
    "end": "2026-03-03T00:00:00Z",
    "timezone": "UTC",
    "total_clicks": 3,
    "unique_visitors": 2,
    "bot_clicks": 1,
    "leads": 1,
    "sales": 1,
    "revenue": 4990,
    "currency": "EUR",
    "revenue_by_currency": [{"currency": "EUR", "amount": 4990, "sales": 1}],
    "lead_rate": 33.3,
    "sale_rate": 100.0,
    "conversions": {
        "days": [
            {
                "day": "2026-03-01",
                "clicks": 3,
                "leads": 1,
                "sales": 1,
                "revenue": 4990,
                "lead_rate": 33.3,
                "sale_rate": 100.0,
            }
        ],
        "countries": [
            {"name": "Germany", "code": "DE", "clicks": 2, "leads": 1, "sales": 1, "revenue": 4990}
        ],
        "devices": [{"name": "Mobile", "clicks": 3, "leads": 1, "sales": 1, "revenue": 4990}],
        "referrers": [{"name": "t.co", "clicks": 1, "leads": 1, "sales": 1, "revenue": 4990}],
    },
    "series": [
        {"hour": "2026-03-01T00:00:00Z", "clicks": 0, "unique_visitors": 0, "bot_clicks": 0},
        {"hour": "2026-03-01T01:00:00Z", "clicks": 3, "unique_visitors": 2, "bot_clicks": 1},
    ],
    "countries": [
        {"name": "Germany", "clicks": 2, "share": 66.7, "code": "DE"},
        {"name": "France", "clicks": 1, "share": 33.3, "code": "FR"},
    ],
    "provinces": [
        {"name": "Bavaria", "clicks": 2, "share": 66.7},
        {"name": "Île-de-France", "clicks": 1, "share": 33.3},
    ],
    "cities": [
        {"name": "Munich", "clicks": 2, "share": 66.7},
        {"name": "Paris", "clicks": 1, "share": 33.3},
    ],
    "isps": [],
    "browsers": [
        {"name": "Chrome", "clicks": 2, "share": 66.7},
        {"name": "Safari", "clicks": 1, "share": 33.3},
    ],
    "os": [
        {"name": "Android", "clicks": 2, "share": 66.7},
        {"name": "iOS", "clicks": 1, "share": 33.3},
    ],
    "devices": [{"name": "Mobile", "clicks": 3, "share": 100.0}],
    "referrers": [
        {"name": "Direct", "clicks": 2, "share": 66.7},
        {"name": "t.co", "clicks": 1, "share": 33.3},
    ],
    "channels": [
        {"name": "QR code", "clicks": 2, "share": 66.7, "channel": "qr"},
        {"name": "Short link", "clicks": 1, "share": 33.3, "channel": "link"},
    ],
    "bots": [{"name": "Slackbot", "clicks": 1, "share": 100.0}],
    "bot_kinds": [{"name": "Social preview", "clicks": 1, "share": 100.0, "kind": "social"}],
    "other": {"countries": {"clicks": 0, "values": 0, "share": 0.0}},
}


class LinkStatsView(LinkApiView):
    serializer_class = LinkStatsSerializer
    read_scope = ApiScope.STATS_READ

    @extend_schema(
        tags=["stats"],
        operation_id="links_stats",
        summary="Click stats of a link",
        description=(
            "Hourly clicks and breakdowns (country, province, city, browser, OS, device, "
            "referrer, short link or QR code) for `[start, end)`, the last 7 days by default. "
            "People and bots are counted apart: the totals, series and breakdowns are people's "
            "clicks. Each entry's `share` is of the whole range's clicks; `other` sums the "
            "entries past `limit` (`?limit=all` lists every entry). `leads`, `sales` and "
            "`revenue` (minor units) count the conversions reported in the range "
            "(POST /api/v1/track/lead and /track/sale), with their rates and, under "
            "`conversions`, by day, country, device and referrer."
        ),
        parameters=[CODE_PARAMETER, DOMAIN_PARAMETER, StatsQuerySerializer, RETRY_AFTER],
        responses={200: LinkStatsSerializer, **error_responses(400, 401, 404, 429)},
        examples=[
            OpenApiExample("Two hours of a link", value=STATS_EXAMPLE, response_only=True),
            OpenApiExample(
                "Bad date",
                value={"start": ["Enter an ISO 8601 date and time, e.g. 2026-03-01T00:00:00Z."]},
                response_only=True,
                status_codes=["400"],
            ),
        ],
    )
    def get(self, request, code: str):
        link = self.get_link(code)  # 404 first: others' codes cannot be probed
        query = validated(StatsQuerySerializer, request.query_params.dict())
        stats = link_stats(link=link, **query)
        return Response(LinkStatsSerializer(stats).data)


class LinkLiveStatsView(LinkApiView):
    serializer_class = LiveStatsSerializer
    read_scope = ApiScope.STATS_READ

    @extend_schema(
        tags=["stats"],
        operation_id="links_stats_live",
        summary="Live click totals of a link",
        description=(
            "The link's clicks in `[start, end)` (the last 7 days by default, `end` open: up to "
            "now), counting a click about a second after it was made, where links_stats counts "
            "it once the hourly roll-up has run (5–10 s). Small and cheap (one indexed query): "
            "meant to be asked every second or so while someone watches. Once the roll-up has "
            "caught up, `clicks` equals links_stats' `total_clicks` of the same range."
        ),
        parameters=[CODE_PARAMETER, DOMAIN_PARAMETER, LiveQuerySerializer, RETRY_AFTER],
        responses={200: LiveStatsSerializer, **error_responses(400, 401, 404, 429)},
        examples=[
            OpenApiExample(
                "A link clicked 42 times this week",
                value={
                    "code": "aZ3kP9q",
                    "start": "2026-02-24T00:00:00Z",
                    "end": None,
                    "clicks": 42,
                    "bot_clicks": 3,
                    "as_of": "2026-03-02T09:15:27.512Z",
                },
                response_only=True,
            ),
        ],
    )
    def get(self, request, code: str):
        link = self.get_link(code)  # 404 first: others' codes cannot be probed
        query = validated(LiveQuerySerializer, request.query_params.dict())
        figures = live_totals(link_ids=[link.pk], **query)
        start = utc_hour(query["start"])
        answer = {"code": link.code, **query, "start": start, **figures}
        # Asked again every second: never a cached answer.
        return Response(LiveStatsSerializer(answer).data, headers={"Cache-Control": "no-store"})


class TagStatsView(LinkApiView):
    serializer_class = TagStatsSerializer
    read_scope = ApiScope.STATS_READ

    @extend_schema(
        tags=["stats"],
        operation_id="tags_stats",
        summary="Click stats of a tag",
        description=(
            "The stats of one link (see links_stats), summed over your links carrying the tag "
            "(any case; archived and stopped links included): clicks add up, and a person who "
            "visited several of them counts once in `unique_visitors`. The tag is a workspace's: "
            "`workspace=<slug>`, else an API key's own workspace, else your personal one."
        ),
        parameters=[
            OpenApiParameter("tag", str, OpenApiParameter.PATH, description="A tag's name."),
            OpenApiParameter(
                "workspace",
                str,
                OpenApiParameter.QUERY,
                required=False,
                description="The workspace whose tag (its slug); a workspace you do not "
                "belong to is a 404.",
            ),
            StatsQuerySerializer,
            RETRY_AFTER,
        ],
        responses={200: TagStatsSerializer, **error_responses(400, 401, 404, 429)},
    )
    def get(self, request, tag: str):
        workspace_id = self.workspace_id_to_read(request.query_params.get("workspace"))
        found = tag_get(user=request.user, name=tag, workspace_id=workspace_id)  # 404 if none
        query = validated(StatsQuerySerializer, request.query_params.dict())
        link_ids = list(found.links.values_list("pk", flat=True))
        stats = links_stats(link_ids=link_ids, **query)
        return Response(
            TagStatsSerializer({**stats, "tag": found.name, "links": len(link_ids)}).data
        )


class WorkspaceStatsView(LinkApiView):
    serializer_class = WorkspaceStatsSerializer
    read_scope = ApiScope.STATS_READ

    @extend_schema(
        tags=["stats"],
        operation_id="workspaces_stats",
        summary="Click and conversion stats of a workspace",
        description=(
            "The stats of one link (see links_stats), summed over every link of the workspace "
            "(archived and stopped ones included): clicks, leads, sales and revenue add up, and "
            "a person who visited several links counts once in `unique_visitors`. A workspace "
            "you do not belong to (or not an API key's own) is a 404."
        ),
        parameters=[
            OpenApiParameter(
                "slug", str, OpenApiParameter.PATH, description="The workspace's slug."
            ),
            StatsQuerySerializer,
            RETRY_AFTER,
        ],
        responses={200: WorkspaceStatsSerializer, **error_responses(400, 401, 404, 429)},
    )
    def get(self, request, slug: str):
        workspace = self.workspace_named(slug)  # 404 for one the caller is not in
        query = validated(StatsQuerySerializer, request.query_params.dict())
        stats = workspace_stats(workspace_id=workspace.pk, **query)
        return Response(WorkspaceStatsSerializer({**stats, "workspace": workspace.slug}).data)
