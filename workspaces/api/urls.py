from django.urls import path

from workspaces.api.audit import AuditListView
from workspaces.api.views import (
    InvitationDetailView,
    InvitationListCreateView,
    MemberDetailView,
    MemberListCreateView,
    MyInvitationAcceptView,
    MyInvitationDeclineView,
    MyInvitationListView,
    WorkspaceDetailView,
    WorkspaceListCreateView,
)

# Included under /api/v1/ before links.api.urls, whose last pattern answers every other path.
urlpatterns = [
    path("audit/", AuditListView.as_view(), name="api-audit"),
    path("workspaces/", WorkspaceListCreateView.as_view(), name="api-workspace-list"),
    path("workspaces/<str:slug>/", WorkspaceDetailView.as_view(), name="api-workspace-detail"),
    path(
        "workspaces/<str:slug>/members/",
        MemberListCreateView.as_view(),
        name="api-workspace-members",
    ),
    path(
        "workspaces/<str:slug>/members/<str:username>/",
        MemberDetailView.as_view(),
        name="api-workspace-member",
    ),
    path(
        "workspaces/<str:slug>/invitations/",
        InvitationListCreateView.as_view(),
        name="api-workspace-invitations",
    ),
    path(
        "workspaces/<str:slug>/invitations/<int:invitation_id>/",
        InvitationDetailView.as_view(),
        name="api-workspace-invitation",
    ),
    path("invitations/", MyInvitationListView.as_view(), name="api-invitations"),
    path(
        "invitations/<int:invitation_id>/accept/",
        MyInvitationAcceptView.as_view(),
        name="api-invitation-accept",
    ),
    path(
        "invitations/<int:invitation_id>/decline/",
        MyInvitationDeclineView.as_view(),
        name="api-invitation-decline",
    ),
]
