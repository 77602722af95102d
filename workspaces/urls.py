from django.urls import path

from workspaces import views

urlpatterns = [
    path("workspaces/", views.workspace_list_page, name="workspaces"),
    path("workspaces/switch/", views.workspace_switch, name="workspace_switch"),
    path("workspaces/<slug:slug>/", views.workspace_page, name="workspace"),
    path("workspaces/<slug:slug>/audit/", views.workspace_audit_page, name="workspace_audit"),
]
