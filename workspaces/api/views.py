"""The workspaces API: the caller's workspaces and their members, thin over
workspaces.services (which decide who may do what).

Reading needs links:read, changing links:write. An API key acts for one workspace: it sees
only that one, and makes no other.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Count
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.response import Response

from core.api.base import validated
from core.api.docs import error_responses
from workspaces import invitations, selectors, services
from workspaces.api.base import WorkspaceApiView
from workspaces.api.serializers import (
    AcceptedSerializer,
    InvitationSerializer,
    MemberAddSerializer,
    MemberSerializer,
    MemberUpdateSerializer,
    MyInvitationSerializer,
    WorkspaceCreateSerializer,
    WorkspaceSerializer,
    WorkspaceUpdateSerializer,
)
from workspaces.models import Invitation, Membership, Workspace
from workspaces.selectors import retention_days

TAGS = ["workspaces"]
SLUG_PARAMETER = OpenApiParameter(
    "slug", str, OpenApiParameter.PATH, description="The workspace's slug."
)
USERNAME_PARAMETER = OpenApiParameter(
    "username", str, OpenApiParameter.PATH, description="The member's username."
)
WORKSPACE_EXAMPLE = {
    "slug": "acme-marketing",
    "name": "Acme marketing",
    "personal": False,
    "role": "owner",
    "members": 3,
    "created_at": "2026-03-01T09:30:00Z",
    "raw_retention_days": 90,
    "effective_retention_days": 90,
    "api_rate_limit": None,
    "analytics_privacy": "none",
    "privacy_mode": "none",
}
PINNED_KEY_MESSAGE = (
    "This API key acts for one workspace only: make workspaces with a token or on the site."
)
PINNED_KEY_INVITATIONS_MESSAGE = (
    "This API key acts for one workspace only: answer invitations with a token or on the site."
)
INVITATION_NOT_FOUND_MESSAGE = "No such invitation waiting for you."
INVITATION_PARAMETER = OpenApiParameter(
    "invitation_id", int, OpenApiParameter.PATH, description="The invitation's id."
)


def _shown(workspaces: list[Workspace]) -> list[dict]:
    """Workspaces (with `.role` set) as the API shows them; members counted in one query."""
    counts = dict(
        Membership.objects.filter(workspace_id__in=[w.pk for w in workspaces])
        .values("workspace_id")
        .annotate(n=Count("pk"))
        .values_list("workspace_id", "n")
    )
    return [
        {
            "slug": w.slug,
            "name": w.name,
            "personal": w.is_personal,
            "role": getattr(w, "role", None),
            "members": counts.get(w.pk, 0),
            "created_at": w.created_at,
            "raw_retention_days": w.raw_retention_days,
            "effective_retention_days": retention_days(w),
            "api_rate_limit": w.api_rate_limit,
            "analytics_privacy": w.analytics_privacy,
            "privacy_mode": selectors.privacy_mode(w.analytics_privacy),
        }
        for w in workspaces
    ]


def _member(membership: Membership) -> dict:
    return {
        "user": membership.user.get_username(),
        "role": membership.role,
        "joined_at": membership.created_at,
    }


def _invitation(invitation: Invitation) -> dict:
    return {
        "id": invitation.pk,
        "user": invitation.address,
        "role": invitation.role,
        "status": "pending",
        "invited_by": invitation.invited_by.get_username() if invitation.invited_by else None,
        "created_at": invitation.created_at,
        "expires_at": invitation.expires_at,
    }


def _my_invitation(invitation: Invitation) -> dict:
    workspace = invitation.workspace
    return {
        "id": invitation.pk,
        "workspace": {
            "slug": workspace.slug,
            "name": workspace.name,
            "personal": workspace.is_personal,
        },
        "role": invitation.role,
        "invited_by": invitation.invited_by.get_username() if invitation.invited_by else None,
        "created_at": invitation.created_at,
        "expires_at": invitation.expires_at,
    }


INVITE_DESCRIPTION = (
    "`user` is a username or an account's email. Nobody becomes a member here: this makes an "
    "invitation (with the role, which you must be allowed to grant) that the invitee sees on "
    "their Workspaces page and at `GET /api/v1/invitations/`, and accepts or declines; it "
    "expires after `WORKSPACE_INVITATION_DAYS` days. The answer is the same whether or not "
    "the address is someone's account (staff who may read accounts excepted); inviting an "
    "address again renews its invitation."
)


class _WorkspaceView(WorkspaceApiView):
    serializer_class = WorkspaceSerializer
    pagination_class = None  # a person's workspaces and a workspace's members: plain lists


class WorkspaceListCreateView(_WorkspaceView):
    @extend_schema(
        tags=TAGS,
        operation_id="workspaces_list",
        summary="Your workspaces",
        description=(
            "The workspaces you belong to, your personal one first, with your role in each. "
            "An API key sees only the workspace it acts for."
        ),
        responses={200: WorkspaceSerializer(many=True), **error_responses(401, 403, 429)},
        examples=[OpenApiExample("A workspace", value=[WORKSPACE_EXAMPLE], response_only=True)],
    )
    def get(self, request):
        workspaces = selectors.workspaces_of(request.user)
        pinned = self.pinned_workspace_id
        if pinned is not None:
            workspaces = [w for w in workspaces if w.pk == pinned]
        return Response(WorkspaceSerializer(_shown(workspaces), many=True).data)

    @extend_schema(
        tags=TAGS,
        operation_id="workspaces_create",
        summary="Make a team workspace",
        description="You become its owner; add members with POST …/members/.",
        request=WorkspaceCreateSerializer,
        responses={201: WorkspaceSerializer, **error_responses(400, 401, 403, 429)},
    )
    def post(self, request):
        if self.pinned_workspace_id is not None:
            raise PermissionDenied(PINNED_KEY_MESSAGE)
        data = validated(WorkspaceCreateSerializer, request.data)
        workspace = services.workspace_create(user=request.user, **data)
        return Response(
            WorkspaceSerializer(_shown([workspace])[0]).data, status=status.HTTP_201_CREATED
        )


class WorkspaceDetailView(_WorkspaceView):
    @extend_schema(
        tags=TAGS,
        operation_id="workspaces_get",
        summary="One workspace",
        parameters=[SLUG_PARAMETER],
        responses={200: WorkspaceSerializer, **error_responses(401, 403, 404, 429)},
        examples=[OpenApiExample("A workspace", value=WORKSPACE_EXAMPLE, response_only=True)],
    )
    def get(self, request, slug: str):
        return Response(WorkspaceSerializer(_shown([self.workspace_named(slug)])[0]).data)

    @extend_schema(
        tags=TAGS,
        operation_id="workspaces_update",
        summary="Rename a workspace, choose its privacy mode, set its raw visit retention or its "
        "keys' default limit (owners)",
        description="Its slug stays: links, keys and tools name the workspace by it. "
        "`analytics_privacy` chooses what its visits stored from now on keep of their "
        "visitors, `raw_retention_days` how long its links' raw visits are kept "
        "(docs/privacy.md); `api_rate_limit`: requests per minute for each API key without a "
        "limit of its own.",
        parameters=[SLUG_PARAMETER],
        request=WorkspaceUpdateSerializer,
        responses={200: WorkspaceSerializer, **error_responses(400, 401, 403, 404, 429)},
    )
    def patch(self, request, slug: str):
        workspace = self.workspace_named(slug)  # 404 before 400
        data = validated(WorkspaceUpdateSerializer, request.data)
        with transaction.atomic():  # all of a PATCH's changes, or none
            if "name" in data:
                workspace = services.workspace_rename(
                    by=request.user, workspace=workspace, name=data["name"]
                )
            if "analytics_privacy" in data:
                workspace = services.workspace_set_privacy(
                    by=request.user, workspace=workspace, privacy=data["analytics_privacy"]
                )
            if "raw_retention_days" in data:
                workspace = services.workspace_set_retention(
                    by=request.user, workspace=workspace, days=data["raw_retention_days"]
                )
            if "api_rate_limit" in data:
                workspace = services.workspace_set_api_rate_limit(
                    by=request.user, workspace=workspace, api_rate_limit=data["api_rate_limit"]
                )
        return Response(WorkspaceSerializer(_shown([workspace])[0]).data)


class MemberListCreateView(_WorkspaceView):
    serializer_class = MemberSerializer

    @extend_schema(
        tags=TAGS,
        operation_id="workspaces_members_list",
        summary="A workspace's members",
        description="Owners first, then editors, then viewers; A–Z within each.",
        parameters=[SLUG_PARAMETER],
        responses={200: MemberSerializer(many=True), **error_responses(401, 403, 404, 429)},
    )
    def get(self, request, slug: str):
        members = selectors.members_of(self.workspace_named(slug))
        return Response(MemberSerializer([_member(m) for m in members], many=True).data)

    @extend_schema(
        tags=TAGS,
        operation_id="workspaces_members_add",
        summary="Invite a member (owners)",
        description=INVITE_DESCRIPTION,
        parameters=[SLUG_PARAMETER],
        request=MemberAddSerializer,
        responses={202: InvitationSerializer, **error_responses(400, 401, 403, 404, 429)},
    )
    def post(self, request, slug: str):
        return _invite(self, request, slug)


def _invite(view: _WorkspaceView, request, slug: str) -> Response:
    workspace = view.workspace_named(slug)
    data = validated(MemberAddSerializer, request.data)
    invitation = invitations.invitation_create(
        by=request.user, workspace=workspace, address=data["user"], role=data["role"]
    )
    return Response(
        InvitationSerializer(_invitation(invitation)).data, status=status.HTTP_202_ACCEPTED
    )


class InvitationListCreateView(_WorkspaceView):
    serializer_class = InvitationSerializer

    @extend_schema(
        tags=TAGS,
        operation_id="workspaces_invitations_list",
        summary="A workspace's waiting invitations (owners)",
        description="Each until it is accepted, withdrawn or expires, newest first. A declined "
        "invitation is listed until it expires, as one sent to an address that is nobody's.",
        parameters=[SLUG_PARAMETER],
        responses={200: InvitationSerializer(many=True), **error_responses(401, 403, 404, 429)},
    )
    def get(self, request, slug: str):
        workspace = self.workspace_named(slug)
        selectors.manage_required(user=request.user, workspace=workspace)
        waiting = selectors.invitations_open_in(workspace)
        return Response(InvitationSerializer([_invitation(i) for i in waiting], many=True).data)

    @extend_schema(
        tags=TAGS,
        operation_id="workspaces_invitations_create",
        summary="Invite a member (owners)",
        description=INVITE_DESCRIPTION + " The same as `POST …/members/`.",
        parameters=[SLUG_PARAMETER],
        request=MemberAddSerializer,
        responses={202: InvitationSerializer, **error_responses(400, 401, 403, 404, 429)},
    )
    def post(self, request, slug: str):
        return _invite(self, request, slug)


class InvitationDetailView(_WorkspaceView):
    serializer_class = InvitationSerializer

    @extend_schema(
        tags=TAGS,
        operation_id="workspaces_invitations_withdraw",
        summary="Withdraw an invitation (owners)",
        parameters=[SLUG_PARAMETER, INVITATION_PARAMETER],
        responses={
            204: OpenApiResponse(description="Withdrawn: it can no longer be accepted."),
            **error_responses(401, 403, 404, 429),
        },
    )
    def delete(self, request, slug: str, invitation_id: int):
        workspace = self.workspace_named(slug)
        try:
            invitations.invitation_withdraw(
                by=request.user, workspace=workspace, invitation_id=invitation_id
            )
        except selectors.InvitationNotFound:
            raise NotFound("No such invitation waiting in this workspace.") from None
        return Response(status=status.HTTP_204_NO_CONTENT)


class _MyInvitationsView(WorkspaceApiView):
    """The caller's own invitations: a DRF token or a session, never an API key, which acts
    for one workspace and so joins none."""

    serializer_class = MyInvitationSerializer
    pagination_class = None

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if self.pinned_workspace_id is not None:
            raise PermissionDenied(PINNED_KEY_INVITATIONS_MESSAGE)


class MyInvitationListView(_MyInvitationsView):
    @extend_schema(
        tags=TAGS,
        operation_id="invitations_list",
        summary="Your invitations",
        description="The invitations to workspaces waiting for your answer, newest first "
        "(not with an API key: 403).",
        responses={200: MyInvitationSerializer(many=True), **error_responses(401, 403, 429)},
    )
    def get(self, request):
        waiting = selectors.invitations_waiting_for(request.user)
        return Response(
            MyInvitationSerializer([_my_invitation(i) for i in waiting], many=True).data
        )


class MyInvitationAcceptView(_MyInvitationsView):
    serializer_class = AcceptedSerializer

    @extend_schema(
        tags=TAGS,
        operation_id="invitations_accept",
        summary="Accept an invitation",
        description="You become a member of its workspace with its role (a member already "
        "keeps their role). 404 for an invitation that is not yours or no longer waits "
        "(expired, withdrawn, answered, or its inviter is no longer an owner there).",
        parameters=[INVITATION_PARAMETER],
        request=None,
        responses={200: AcceptedSerializer, **error_responses(401, 403, 404, 429)},
    )
    def post(self, request, invitation_id: int):
        try:
            membership = invitations.invitation_accept(
                user=request.user, invitation_id=invitation_id
            )
        except selectors.InvitationNotFound:
            raise NotFound(INVITATION_NOT_FOUND_MESSAGE) from None
        return Response(
            AcceptedSerializer(
                {
                    "workspace": membership.workspace.slug,
                    "role": membership.role,
                    "joined_at": membership.created_at,
                }
            ).data
        )


class MyInvitationDeclineView(_MyInvitationsView):
    @extend_schema(
        tags=TAGS,
        operation_id="invitations_decline",
        summary="Decline an invitation",
        description="It leaves your list; its inviter is not told.",
        parameters=[INVITATION_PARAMETER],
        request=None,
        responses={
            204: OpenApiResponse(description="Declined."),
            **error_responses(401, 403, 404, 429),
        },
    )
    def post(self, request, invitation_id: int):
        try:
            invitations.invitation_decline(user=request.user, invitation_id=invitation_id)
        except selectors.InvitationNotFound:
            raise NotFound(INVITATION_NOT_FOUND_MESSAGE) from None
        return Response(status=status.HTTP_204_NO_CONTENT)


class MemberDetailView(_WorkspaceView):
    serializer_class = MemberSerializer

    @extend_schema(
        tags=TAGS,
        operation_id="workspaces_members_update",
        summary="Change a member's role (owners)",
        description="A workspace keeps at least one owner; a personal workspace's own user stays "
        "its owner.",
        parameters=[SLUG_PARAMETER, USERNAME_PARAMETER],
        request=MemberUpdateSerializer,
        responses={200: MemberSerializer, **error_responses(400, 401, 403, 404, 429)},
    )
    def patch(self, request, slug: str, username: str):
        workspace = self.workspace_named(slug)
        data = validated(MemberUpdateSerializer, request.data)
        membership = services.member_set_role(
            by=request.user, workspace=workspace, username=username, role=data["role"]
        )
        return Response(MemberSerializer(_member(membership)).data)

    @extend_schema(
        tags=TAGS,
        operation_id="workspaces_members_remove",
        summary="Remove a member (owners), or leave",
        description="Owners remove anyone; any member may remove themselves (leave). The last "
        "owner and a personal workspace's own user stay.",
        parameters=[SLUG_PARAMETER, USERNAME_PARAMETER],
        responses={
            204: OpenApiResponse(description="Removed."),
            **error_responses(400, 401, 403, 404, 429),
        },
    )
    def delete(self, request, slug: str, username: str):
        workspace = self.workspace_named(slug)
        services.member_remove(by=request.user, workspace=workspace, username=username)
        return Response(status=status.HTTP_204_NO_CONTENT)
