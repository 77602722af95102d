from django.urls import path

from .views import (
    MemberDetailView,
    MemberListCreateView,
    WorkspaceDetailView,
    WorkspaceListCreateView,
)

# Included under /api/v1/ before links.api.urls, whose last pattern answers every other path.
urlpatterns = [
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
]
