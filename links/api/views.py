"""The links API: each view checks its input, calls one service or selector, and serializes."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError as DrfValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from core.api.base import JsonBodyParser, field_errors, validated
from core.api.docs import RETRY_AFTER, DetailSerializer, error_responses
from core.errors import NotFound
from links import qr
from links.api.base import LinkApiView
from links.api.docs import CODE_PARAMETER, DOMAIN_PARAMETER, LINK_EXAMPLE
from links.api.serializers.bulk import (
    BulkChangeRequestSerializer,
    BulkChangeResponseSerializer,
    BulkRequestDocSerializer,
    BulkRequestSerializer,
    BulkResponseSerializer,
)
from links.api.serializers.domains import DomainSerializer
from links.api.serializers.inputs import (
    LinkCreateSerializer,
    LinkUpdateSerializer,
    validate_create_items,
)
from links.api.serializers.links import LinkCreatedSerializer, LinkSerializer
from links.api.serializers.qr_design import (
    QrDesignJsonSerializer,
    QrDesignSerializer,
    QrDesignUploadSerializer,
)
from links.api.serializers.queries import LinkListQuerySerializer, QrQuerySerializer
from links.api.serializers.tags import (
    TagRenamedSerializer,
    TagRenameSerializer,
    TagSerializer,
    WorkspaceQuerySerializer,
)
from links.selectors import (
    default_domain_host,
    domain_list_for,
    link_click_totals,
    link_get_changeable,
    link_list,
    link_tag_names,
    tag_list,
)
from links.services import qr_design
from links.services.bulk import link_create_many
from links.services.bulk_change import BULK_CHANGES, REFUSED, link_change_many
from links.services.change import link_revoke, link_update
from links.services.create import link_create
from links.services.gates import capped_visits_used
from links.services.tags import tag_delete, tag_rename
from links.shortlinks import link_page_url, link_short_url
from workspaces.services import workspace_for_writing

TAGS = ["links"]
ITEM_WORKSPACE_MESSAGE = (
    "Every item of a call goes to one workspace: name it once, as `workspace` beside `items`."
)


class _LinkViewMixin:
    serializer_class = LinkSerializer

    def serialize(self, links, *, many: bool = False, counted: list[int] | None = None):
        """Links as JSON, their click totals read with one query for all of them (for the links
        in `counted` only, when given: the others are known to have none)."""
        items = list(links) if many else [links]
        if counted is None:
            counted = [link.pk for link in items]
        totals = link_click_totals(link_ids=counted, people=False)  # it shows clicks only
        tags = link_tag_names(link_ids=[link.pk for link in items])
        context = {
            "request": self.request,
            "totals": totals,
            "tags": tags,
            "visits_used": capped_visits_used(items),  # one read for the capped ones
        }
        return LinkSerializer(links, many=many, context=context).data


class LinkListCreateView(_LinkViewMixin, LinkApiView):
    @extend_schema(
        tags=TAGS,
        operation_id="links_list",
        summary="List links",
        description=(
            "Your links, newest first, 50 per page (`page_size` up to 500). "
            "Staff see every link unless they pass `mine=true`. Archived links are left out "
            "unless `archived=true`; `status=scheduled` (or another state) keeps the links in "
            "that state; `health=broken` the links whose destination the health checker finds "
            "broken; `tag=x&tag=y` keeps the links with every one of those tags, "
            "`exclude_tag=x&exclude_tag=y` leaves out the links with any of them; "
            "`domain=<host>` the links on that short domain; `workspace=<slug>` one workspace's "
            "(an API key lists only its own workspace's links)."
        ),
        parameters=[LinkListQuerySerializer, RETRY_AFTER],
        responses={
            200: LinkSerializer(many=True),
            **error_responses(400, 401, 404, 429),
        },
        examples=[
            OpenApiExample(
                "A page of links",
                value=LINK_EXAMPLE,
                response_only=True,
                status_codes=["200"],
            )
        ],
    )
    def get(self, request):
        params = request.query_params.dict()
        for repeatable in ("tag", "exclude_tag"):
            if repeatable in request.query_params:
                params[repeatable] = request.query_params.getlist(repeatable)
        query = validated(LinkListQuerySerializer, params)
        workspace_id = self.workspace_id_to_read(query.get("workspace"))
        links = link_list(
            user=request.user,
            search=query.get("search"),
            active=query["active"],
            statuses=[query["status"]] if query.get("status") else None,
            health=query.get("health"),
            owned_only=query["mine"],
            tags=query.get("tag"),
            exclude_tags=query.get("exclude_tag"),
            archived=query["archived"],
            domain=query.get("domain"),
            request_host=request.get_host(),
            workspace_id=workspace_id,
        )
        page = self.paginate_queryset(links)
        return self.get_paginated_response(self.serialize(page, many=True))

    @extend_schema(
        tags=TAGS,
        operation_id="links_create",
        summary="Shorten a URL",
        description=(
            "Creates a short link (201). Sent with nothing but `long_url`, and you already have "
            "an active link to that URL with no options, that link comes back instead (200). "
            "A new alias that differs from an existing one only by case is created, with "
            '`warnings: {"alias": ["…"]}` added to the link. A taken alias is refused (400) '
            "with a free one like it named in the message. The link goes to `workspace` (a slug), "
            "else an API key's own workspace, else your personal one; a viewer of the workspace "
            "is refused (403)."
        ),
        request=LinkCreateSerializer,
        parameters=[RETRY_AFTER],
        responses={
            201: OpenApiResponse(LinkCreatedSerializer, description="A new link."),
            200: OpenApiResponse(LinkSerializer, description="Your existing link to that URL."),
            **error_responses(400, 401, 403, 429, 503),
        },
        examples=[
            OpenApiExample(
                "Just a URL",
                value={"long_url": "https://www.example.com/spring-sale?utm_source=newsletter"},
                request_only=True,
            ),
            OpenApiExample(
                "With alias and options",
                value={
                    "long_url": "https://www.example.com/spring-sale",
                    "alias": "spring-sale",
                    "title": "Spring sale",
                    "expires_at": "2026-06-30T23:59:59Z",
                    "redirect_type": 302,
                },
                request_only=True,
            ),
            OpenApiExample(
                "The link", value=LINK_EXAMPLE, response_only=True, status_codes=["201", "200"]
            ),
            OpenApiExample(
                "Alias taken",
                value={
                    "alias": ["The alias “spring-sale” is already taken; “spring-sale-2” is free."]
                },
                response_only=True,
                status_codes=["400"],
            ),
        ],
    )
    def post(self, request):
        data = validated(LinkCreateSerializer, request.data)
        result = link_create(
            user=request.user,
            request_host=request.get_host(),
            pinned_workspace_id=self.pinned_workspace_id,
            **data,
        )
        headers = {"Location": link_page_url("api-link-detail", result.link)}
        # A new link has no clicks yet: its totals are not read.
        body = self.serialize(result.link, counted=[] if result.created else None)
        if result.warnings:
            body = {**body, "warnings": result.warnings}
        return Response(
            body,
            status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
            headers=headers,
        )


class LinkDetailView(_LinkViewMixin, LinkApiView):
    @extend_schema(
        tags=TAGS,
        operation_id="links_restore",
        summary="Restore a link (code → long URL)",
        description="The link behind a code, with its long URL and all-time clicks.",
        parameters=[CODE_PARAMETER, DOMAIN_PARAMETER, RETRY_AFTER],
        responses={200: LinkSerializer, **error_responses(401, 404, 429)},
        examples=[OpenApiExample("The link", value=LINK_EXAMPLE, response_only=True)],
    )
    def get(self, request, code: str):
        return Response(self.serialize(self.get_link(code)))

    @extend_schema(
        tags=TAGS,
        operation_id="links_update",
        summary="Change a link",
        description=(
            "Changes only the fields sent. The redirect uses the new values from the next "
            "click on (its cached entry is dropped). `expires_at: null` removes the expiry, "
            "`valid_since: null` the start (the link is live at once). A start at or after the "
            "expiry is refused (400, naming the field sent)."
        ),
        request=LinkUpdateSerializer,
        parameters=[CODE_PARAMETER, DOMAIN_PARAMETER, RETRY_AFTER],
        responses={200: LinkSerializer, **error_responses(400, 401, 403, 404, 429)},
        examples=[
            OpenApiExample(
                "New target and title",
                value={"long_url": "https://www.example.com/summer-sale", "title": "Summer sale"},
                request_only=True,
            ),
            OpenApiExample(
                "The changed link",
                value={
                    **LINK_EXAMPLE,
                    "long_url": "https://www.example.com/summer-sale",
                    "title": "Summer sale",
                },
                response_only=True,
                status_codes=["200"],
            ),
        ],
    )
    def patch(self, request, code: str):
        link = self.get_link(code)  # 404 before 400: others' codes cannot be probed
        data = validated(LinkUpdateSerializer, request.data)
        link = link_update(
            code=code,
            domain=link.domain_host,
            user=request.user,
            request_host=request.get_host(),
            workspace_id=self.pinned_workspace_id,
            **data,
        )
        return Response(self.serialize(link))

    @extend_schema(
        tags=TAGS,
        operation_id="links_revoke",
        summary="Revoke a link",
        description="The link expires now; its short URL answers 410 Gone from the next click.",
        parameters=[CODE_PARAMETER, DOMAIN_PARAMETER, RETRY_AFTER],
        responses={
            204: OpenApiResponse(description="Revoked."),
            **error_responses(401, 403, 404, 429),
        },
    )
    def delete(self, request, code: str):
        # LinkNotFound (404) and AmbiguousCode (400) come from the service's own lookup.
        link_revoke(
            code=code,
            domain=request.query_params.get("domain"),
            user=request.user,
            request_host=request.get_host(),
            workspace_id=self.pinned_workspace_id,
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class LinkBulkView(_LinkViewMixin, LinkApiView):
    @extend_schema(
        tags=TAGS,
        operation_id="links_bulk_create",
        summary="Shorten many URLs",
        description=(
            "Up to 1,000 items, each shaped like the body of `POST /links/`, in one "
            "transaction. Every item succeeds or fails on its own: the answer is 200 with one "
            "result per item, in order, whose `status` says what happened to it (201 created, "
            "200 your existing link, 400 refused with `errors`); a new alias that differs from "
            'another only by case adds `warnings: {"alias": ["…"]}` to its result. The whole '
            "call is refused (400) only when `items` itself is missing, empty or longer than "
            "1,000, or when `workspace` (beside `items`: one for every item) is not one you "
            "may write in (400 for a workspace you are not in, 403 for a viewer's)."
        ),
        request=BulkRequestDocSerializer,
        parameters=[RETRY_AFTER],
        responses={200: BulkResponseSerializer, **error_responses(400, 401, 403, 429)},
        examples=[
            OpenApiExample(
                "Two URLs",
                value={
                    "items": [
                        {"long_url": "https://www.example.com/spring-sale"},
                        {"long_url": "ftp://files.example.com/brochure.pdf"},
                    ]
                },
                request_only=True,
            ),
            OpenApiExample(
                "One created, one refused",
                value={
                    "created": 1,
                    "existing": 0,
                    "failed": 1,
                    "results": [
                        {"index": 0, "status": 201, "link": LINK_EXAMPLE, "errors": None},
                        {
                            "index": 1,
                            "status": 400,
                            "link": None,
                            "errors": {"long_url": ["Only http and https URLs can be shortened."]},
                        },
                    ],
                },
                response_only=True,
                status_codes=["200"],
            ),
        ],
    )
    def post(self, request):
        call = validated(BulkRequestSerializer, request.data)
        raw_items = call["items"]
        # Refused before any item is looked at: the workspace is the whole call's.
        workspace = workspace_for_writing(
            user=request.user,
            workspace=call.get("workspace") or None,
            pinned_id=self.pinned_workspace_id,
        )
        # Items are checked one by one: a bad item is reported in its own result.
        results: list[dict] = [
            {"index": i, "status": None, "link": None, "errors": None}
            for i in range(len(raw_items))
        ]
        valid_indexes, valid_items = [], []
        for index, (data, errors) in enumerate(validate_create_items(raw_items)):
            if errors is None and data.pop("workspace", None) not in (None, "", workspace.slug):
                errors = {"workspace": [ITEM_WORKSPACE_MESSAGE]}
            if errors is None:
                valid_indexes.append(index)
                valid_items.append(data)
            else:
                results[index].update(status=400, errors=errors)
        outcomes = link_create_many(
            user=request.user,
            items=valid_items,
            request_host=request.get_host(),
            workspace=workspace,
        )
        links = [outcome.link for outcome in outcomes if outcome.link is not None]
        # Links made by this call have no clicks yet: totals are read for the existing ones only.
        existing_ids = [o.link.pk for o in outcomes if o.link is not None and not o.created]
        serialized = iter(self.serialize(links, many=True, counted=existing_ids))
        for index, outcome in zip(valid_indexes, outcomes, strict=True):
            if outcome.link is None:
                results[index].update(status=400, errors=outcome.errors)
            else:
                results[index].update(status=201 if outcome.created else 200, link=next(serialized))
                if outcome.warnings:
                    results[index]["warnings"] = outcome.warnings
        counts = {201: 0, 200: 0, 400: 0}
        for result in results:
            counts[result["status"]] += 1
        return Response(
            {
                "created": counts[201],
                "existing": counts[200],
                "failed": counts[400],
                "results": results,
            }
        )

    @extend_schema(
        tags=TAGS,
        operation_id="links_bulk_change",
        summary="Change many links",
        description=(
            "The same change for up to 1,000 links, each by the rules of `PATCH /links/{code}/` "
            "and `DELETE /links/{code}/`: `set` takes `tags` (replace) or `add_tags`, "
            "`archived`, `revoked: true`, `expires_at`, `workspace` (move; you must write in "
            "both). The answer is 200 with one result per distinct code, in order: `changed`, "
            "`unchanged` (it already was so), or `refused` with `errors` naming why (`code`: "
            "not found or yours only to view; `expires_at`: revoked, or before the link's start; "
            "`add_tags`: over 20 tags; `workspace`: its short domain is kept for another "
            "workspace). One transaction per call: the links not refused change together, or "
            "none does (503 when the link cache is out of reach). The whole call is refused "
            "(400, naming the field) when it is malformed or names over 1,000 codes, and when "
            "`set.workspace` is not one you may write in (400; 403 for a viewer's)."
        ),
        request=BulkChangeRequestSerializer,
        parameters=[RETRY_AFTER],
        responses={200: BulkChangeResponseSerializer, **error_responses(400, 401, 403, 429, 503)},
        examples=[
            OpenApiExample(
                "Archive and tag three links",
                value={
                    "codes": ["spring-sale", "aB3xY9k", "Zq81mPt"],
                    "set": {"archived": True, "add_tags": ["spring"]},
                },
                request_only=True,
            ),
            OpenApiExample(
                "Two changed, one refused",
                value={
                    "changed": 2,
                    "unchanged": 0,
                    "refused": 1,
                    "results": [
                        {"code": "spring-sale", "outcome": "changed", "errors": None},
                        {"code": "aB3xY9k", "outcome": "changed", "errors": None},
                        {
                            "code": "Zq81mPt",
                            "outcome": "refused",
                            "errors": {
                                "code": ["Viewers of the workspace 'team' cannot change its links."]
                            },
                        },
                    ],
                },
                response_only=True,
                status_codes=["200"],
            ),
        ],
    )
    def patch(self, request):
        call = validated(BulkChangeRequestSerializer, request.data)
        try:
            results = link_change_many(
                user=request.user,
                codes=call["codes"],
                changes=dict(call["set"]),
                workspace_id=self.pinned_workspace_id,
            )
        except DjangoValidationError as exc:
            # The rules of `set`'s fields are named inside `set`, as its types are.
            errors = field_errors(exc)
            inside = {name: errors.pop(name) for name in list(errors) if name in BULK_CHANGES}
            if inside:
                errors["set"] = inside
            raise DrfValidationError(errors) from None
        counts = {"changed": 0, "unchanged": 0, "refused": 0}
        for result in results:
            counts[result.outcome] += 1
        return Response(
            {
                **counts,
                "results": [
                    {
                        "code": result.code,
                        "outcome": result.outcome,
                        "errors": result.errors if result.outcome == REFUSED else None,
                    }
                    for result in results
                ],
            }
        )


class _ErrorsAsJson(DefaultContentNegotiation):
    """For a view that answers with a file: `?format=` is the view's own parameter, not DRF's
    renderer override (which would answer 404 for `png`), and whatever the Accept header asks
    for (`image/png`), errors are JSON."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class LinkQrView(LinkApiView):
    serializer_class = QrQuerySerializer
    content_negotiation_class = _ErrorsAsJson

    @extend_schema(
        tags=TAGS,
        operation_id="links_qr",
        summary="QR code of a link (PNG or SVG)",
        description=(
            "The QR code people scan to open the short link, as a file. It encodes the short "
            "URL with `?qr=1`: those visits count as `qr` in the stats' `channels` breakdown, "
            "and the marker is not passed on to the long URL."
        ),
        parameters=[CODE_PARAMETER, DOMAIN_PARAMETER, QrQuerySerializer, RETRY_AFTER],
        responses={
            **{
                (200, media_type): OpenApiResponse(
                    OpenApiTypes.BINARY,
                    description="The QR code as a file to download (PNG or SVG, as `format` asks), "
                    "named `<code>-qr-<size>.png` or `<code>-qr.svg`.",
                )
                for media_type in qr.CONTENT_TYPES.values()
            },
            **error_responses(400, 401, 404, 429),
        },
    )
    def get(self, request, code: str):
        link = self.get_link(code)  # 404 first: others' codes cannot be probed
        query = validated(QrQuerySerializer, request.query_params.dict())
        return qr.file_response(
            code=link.code,
            short_url=link_short_url(link, request=request),
            fmt=query["format"],
            size=query.get("size") or None,
            style=qr_design.design_style(qr_design.link_design(link)),
        )


_REVOKED_409 = {
    409: OpenApiResponse(
        DetailSerializer,
        description="The link is revoked: its design can no longer change.",
    )
}


class LinkQrDesignView(LinkApiView):
    """A link's QR design (#28): colours, error level, centre logo; the QR endpoint draws it."""

    serializer_class = QrDesignSerializer
    parser_classes = [JsonBodyParser, MultiPartParser]

    def _answer(self, link) -> Response:
        design = qr_design.link_design(link)
        qr_path = reverse("api-link-qr", args=[link.code])
        domain = f"&domain={link.domain_host}" if link.domain_host else ""
        return Response(
            QrDesignSerializer(
                {
                    "foreground": design.foreground if design else "#000000",
                    "background": design.background if design else "#ffffff",
                    "error_level": design.error_level if design else "m",
                    "has_logo": bool(design and design.logo),
                    "designed": design is not None,
                    "png_url": self.request.build_absolute_uri(f"{qr_path}?format=png{domain}"),
                    "svg_url": self.request.build_absolute_uri(f"{qr_path}?format=svg{domain}"),
                }
            ).data
        )

    def get_object(self):
        """What DRF's OPTIONS answer asks to describe PUT: the link, if the caller may change it
        (otherwise PUT is left out of the answer)."""
        try:
            return self._changeable(self.kwargs["code"])
        except (NotFound, DjangoPermissionDenied):
            raise Http404 from None

    def _changeable(self, code: str):
        self.get_link(code)  # 404 first
        return link_get_changeable(
            code=code,
            user=self.request.user,
            domain=self.request.query_params.get("domain"),
            request_host=self.request.get_host(),
            workspace_id=self.pinned_workspace_id,
        )

    @extend_schema(
        tags=TAGS,
        operation_id="links_qr_design_read",
        summary="A link's QR design",
        parameters=[CODE_PARAMETER, DOMAIN_PARAMETER, RETRY_AFTER],
        responses={200: QrDesignSerializer, **error_responses(401, 404, 429)},
    )
    def get(self, request, code: str):
        return self._answer(self.get_link(code))

    @extend_schema(
        tags=TAGS,
        operation_id="links_qr_design_set",
        summary="Set a link's QR design",
        description=(
            "Colours (`#rrggbb`; the code darker than its background, contrast at least "
            "4.5:1), error level, and a centre logo (PNG or SVG, at most 200 KB; an SVG is "
            "rasterised; a logo makes the level h). Fields left out keep their value. JSON, or "
            "multipart/form-data to upload `logo` as a file."
        ),
        parameters=[CODE_PARAMETER, DOMAIN_PARAMETER, RETRY_AFTER],
        request={
            "application/json": QrDesignJsonSerializer,
            "multipart/form-data": QrDesignUploadSerializer,
        },
        responses={
            200: QrDesignSerializer,
            **error_responses(400, 401, 403, 404, 429),
            **_REVOKED_409,
        },
    )
    def put(self, request, code: str):
        link = self._changeable(code)
        upload_form = request.content_type.startswith("multipart/")
        data = validated(
            QrDesignUploadSerializer if upload_form else QrDesignJsonSerializer, request.data
        )
        upload = data.get("logo")
        logo = upload.read(qr_design.LOGO_MAX_BYTES + 1) if upload else data.get("logo_base64")
        fields = {
            key: data[key] for key in ("foreground", "background", "error_level") if key in data
        }
        qr_design.qr_design_save(
            link=link,
            logo=logo or None,
            logo_name=upload.name if upload else data.get("logo_name", ""),
            remove_logo=data["remove_logo"],
            **fields,
        )
        return self._answer(link)

    @extend_schema(
        tags=TAGS,
        operation_id="links_qr_design_reset",
        summary="Reset a link's QR code to plain black on white",
        parameters=[CODE_PARAMETER, DOMAIN_PARAMETER, RETRY_AFTER],
        responses={204: None, **error_responses(401, 403, 404, 429), **_REVOKED_409},
    )
    def delete(self, request, code: str):
        qr_design.qr_design_reset(link=self._changeable(code))
        return Response(status=status.HTTP_204_NO_CONTENT)


class TagListView(LinkApiView):
    serializer_class = TagSerializer
    pagination_class = None

    @extend_schema(
        tags=["tags"],
        operation_id="tags_list",
        summary="Your tags",
        description=(
            "Every tag of a workspace's links, A–Z, with how many of its links carry it: "
            "`workspace=<slug>`, else an API key's own workspace, else your personal one. Not "
            "paginated. Tags are made by giving them to a link (`tags` on POST or PATCH)."
        ),
        parameters=[WorkspaceQuerySerializer, RETRY_AFTER],
        responses={200: TagSerializer(many=True), **error_responses(400, 401, 404, 429)},
        examples=[
            OpenApiExample(
                "Two tags",
                value=[{"name": "newsletter", "links": 3}, {"name": "Spring sale", "links": 1}],
                response_only=True,
            )
        ],
    )
    def get(self, request):
        tags = tag_list(user=request.user, workspace_id=self.tag_workspace_id())
        return Response(TagSerializer(tags, many=True).data)


TAG_PARAMETER = OpenApiParameter(
    "tag",
    str,
    OpenApiParameter.PATH,
    description="A tag's name, any case (a `/` in it is sent as `%2F`).",
)
TAG_WRITE_DESCRIPTION = (
    "The tag is a workspace's: `workspace=<slug>`, else an API key's own workspace, else your "
    "personal one. Its owners and editors may do this; a viewer is refused (403), an unknown "
    "tag or workspace is a 404. An API key needs `links:write`."
)


class TagDetailView(LinkApiView):
    serializer_class = TagRenamedSerializer
    pagination_class = None

    @extend_schema(
        tags=["tags"],
        operation_id="tags_rename",
        summary="Rename a tag",
        description=(
            "Renames the tag on every link carrying it. A new spelling of the same name "
            "(`spring` → `Spring`) only changes the spelling. The name of another tag of the "
            "workspace (any case) **merges** the two: this tag's links get the existing tag, "
            "which keeps its spelling, this tag goes, and the answer says `merged: true`. The "
            "new name follows the rules of `tags` on links (400 under `name`). "
            + TAG_WRITE_DESCRIPTION
        ),
        request=TagRenameSerializer,
        parameters=[TAG_PARAMETER, WorkspaceQuerySerializer, RETRY_AFTER],
        responses={200: TagRenamedSerializer, **error_responses(400, 401, 403, 404, 429)},
        examples=[
            OpenApiExample("A new name", value={"name": "Summer sale"}, request_only=True),
            OpenApiExample(
                "Renamed",
                value={"name": "Summer sale", "links": 3, "merged": False},
                response_only=True,
                status_codes=["200"],
            ),
            OpenApiExample(
                "Merged into an existing tag",
                value={"name": "newsletter", "links": 5, "merged": True},
                response_only=True,
                status_codes=["200"],
            ),
        ],
    )
    def patch(self, request, tag: str):
        workspace_id = self.tag_workspace_id()
        data = validated(TagRenameSerializer, request.data)
        renamed = tag_rename(
            user=request.user, workspace_id=workspace_id, tag=tag, new_name=data["name"]
        )
        return Response(TagRenamedSerializer(renamed).data)

    @extend_schema(
        tags=["tags"],
        operation_id="tags_delete",
        summary="Delete a tag",
        description=(
            "Takes the tag off every link carrying it and deletes it; the links themselves stay "
            "as they are. " + TAG_WRITE_DESCRIPTION
        ),
        parameters=[TAG_PARAMETER, WorkspaceQuerySerializer, RETRY_AFTER],
        responses={
            204: OpenApiResponse(description="Deleted."),
            **error_responses(400, 401, 403, 404, 429),
        },
    )
    def delete(self, request, tag: str):
        tag_delete(user=request.user, workspace_id=self.tag_workspace_id(), tag=tag)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DomainListView(LinkApiView):
    serializer_class = DomainSerializer
    pagination_class = None

    @extend_schema(
        tags=["domains"],
        operation_id="domains_list",
        summary="The short domains",
        description=(
            "The hosts your links can be put on (`domain` on POST /links/), the default one "
            "first: those open to every workspace and those kept for a workspace of yours "
            "(`workspace=<slug>`: that one's; an API key: its own workspace's). A domain kept "
            "for another workspace is not listed. Staff add domains in the admin (and, "
            "with the permission to change them, are listed every one)."
        ),
        parameters=[
            OpenApiParameter(
                "workspace",
                str,
                description="Only the domains this workspace's links may use (its slug). A "
                "workspace you do not belong to is a 404.",
            ),
            RETRY_AFTER,
        ],
        responses={200: DomainSerializer(many=True), **error_responses(401, 404, 429)},
        examples=[
            OpenApiExample(
                "Two domains",
                value=[
                    {"host": "s.example.com", "is_default": True},
                    {"host": "go.example.org", "is_default": False},
                ],
                response_only=True,
            )
        ],
    )
    def get(self, request):
        default_host = default_domain_host(request.get_host())
        usable = domain_list_for(
            user=request.user,
            workspace_id=self.workspace_id_to_read(request.query_params.get("workspace")),
        )
        domains = [
            {"host": domain.host or default_host, "is_default": domain.is_default}
            for domain in usable
        ]
        return Response(DomainSerializer(domains, many=True).data)
