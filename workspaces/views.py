"""The workspace pages: your workspaces, one workspace's members, and the header's switcher.

Views only translate between HTTP and workspaces.services / selectors: a service's
ValidationError is shown on the form, its PermissionDenied is the 403 page.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from audit.selectors import audit_actions, audit_csv_chunks, audit_entries
from core.csv_cells import csv_download
from core.forms import add_service_errors
from workspaces import invitations, services
from workspaces.current import current_workspace, my_workspaces, switch_to
from workspaces.forms import (
    ApiRateLimitForm,
    AuditFilterForm,
    MemberAddForm,
    PrivacyForm,
    RetentionForm,
    WorkspaceCreateForm,
)
from workspaces.models import Role, Workspace
from workspaces.selectors import (
    InvitationNotFound,
    WorkspaceNotFound,
    audit_workspace_ids,
    invitations_open_in,
    invitations_waiting_for,
    may_manage,
    members_of,
    privacy_mode,
    retention_days,
    workspace_get,
)


def _answer_invitation(request: HttpRequest) -> HttpResponse:
    """Accept or decline one of the person's invitations (the Workspaces page's buttons)."""
    action = request.POST.get("action")
    try:
        invitation_id = int(request.POST.get("invitation", ""))
    except ValueError:
        raise Http404("No such invitation.") from None
    try:
        if action == "accept":
            membership = invitations.invitation_accept(
                user=request.user, invitation_id=invitation_id
            )
        else:
            invitations.invitation_decline(user=request.user, invitation_id=invitation_id)
    except InvitationNotFound:
        messages.error(request, "That invitation no longer waits for you.")
        return redirect("workspaces")
    if action == "decline":
        messages.success(request, "Invitation declined.")
        return redirect("workspaces")
    workspace = membership.workspace
    messages.success(
        request,
        f"You joined {workspace.name} as {membership.get_role_display().lower()}.",
    )
    return redirect("workspace", slug=workspace.slug)


@login_required
@require_http_methods(["GET", "POST"])
def workspace_list_page(request: HttpRequest) -> HttpResponse:
    """Your workspaces with your role in each, the invitations waiting for your answer, and a
    form to make a team workspace."""
    if request.method == "POST" and request.POST.get("action") in ("accept", "decline"):
        return _answer_invitation(request)
    form = WorkspaceCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            workspace = services.workspace_create(
                user=request.user,
                name=form.cleaned_data["name"],
                slug=form.cleaned_data["slug"],
            )
        except ValidationError as error:
            add_service_errors(form, error)
        else:
            switch_to(request, workspace)
            messages.success(
                request,
                f"Made the workspace “{workspace.name}”; you are its owner and work in it now.",
            )
            return redirect("workspace", slug=workspace.slug)
    return render(
        request,
        "workspaces/list.html",
        {
            "form": form,
            "workspaces": my_workspaces(request),
            "current": current_workspace(request),
            "invitations": invitations_waiting_for(request.user),
        },
        status=400 if form.errors else 200,
    )


def _member_workspace_or_404(request: HttpRequest, slug: str) -> Workspace:
    try:
        # The slug as linked (exact): the page of a team whose slug is the person's own name
        # stays reachable from their list.
        return workspace_get(user=request.user, slug=slug, exact=True)
    except WorkspaceNotFound:
        raise Http404("No such workspace.") from None


@login_required
@require_http_methods(["GET", "POST"])
def workspace_page(request: HttpRequest, slug: str) -> HttpResponse:
    """A workspace's members. Owners invite (by username or email) and withdraw invitations,
    change roles and remove; any member may leave; everyone else who belongs sees the list.
    Not a member: 404."""
    workspace = _member_workspace_or_404(request, slug)
    manages = may_manage(user=request.user, role=workspace.role)
    add_form = MemberAddForm(request.POST if request.POST.get("action") == "add" else None)
    retention_form = RetentionForm(
        request.POST if request.POST.get("action") == "retention" else None,
        initial={"raw_retention_days": workspace.raw_retention_days},
    )
    privacy_form = PrivacyForm(
        request.POST if request.POST.get("action") == "privacy" else None,
        initial={"analytics_privacy": workspace.analytics_privacy},
        default_mode=privacy_mode(""),
    )
    limit_form = ApiRateLimitForm(
        request.POST if request.POST.get("action") == "api_rate_limit" else None,
        initial={"api_rate_limit": workspace.api_rate_limit},
    )
    row_error = None  # (username, messages) for a refused change on one member's row
    if request.method == "POST":
        action = request.POST.get("action")
        username = request.POST.get("username", "")
        try:
            if action == "add":
                if add_form.is_valid():
                    invitation = invitations.invitation_create(
                        by=request.user,
                        workspace=workspace,
                        address=add_form.cleaned_data["username"],
                        role=add_form.cleaned_data["role"],
                    )
                    # The address as typed: never the username of an account an email named.
                    messages.success(
                        request,
                        f"Invited {invitation.address} as {invitation.get_role_display().lower()}"
                        f". They become a member when they accept, until "
                        f"{invitation.expires_at:%Y-%m-%d}.",
                    )
                    return redirect("workspace", slug=workspace.slug)
            elif action == "withdraw":
                try:
                    invitations.invitation_withdraw(
                        by=request.user,
                        workspace=workspace,
                        invitation_id=int(request.POST.get("invitation", "")),
                    )
                except (InvitationNotFound, ValueError):
                    messages.error(request, "That invitation no longer waits.")
                else:
                    messages.success(request, "Invitation withdrawn.")
                return redirect("workspace", slug=workspace.slug)
            elif action == "privacy":
                if privacy_form.is_valid():
                    services.workspace_set_privacy(
                        by=request.user,
                        workspace=workspace,
                        privacy=privacy_form.cleaned_data["analytics_privacy"],
                    )
                    messages.success(
                        request,
                        f"Visits of {workspace.name} are now stored in the "
                        f"“{privacy_mode(workspace.analytics_privacy)}” privacy mode.",
                    )
                    return redirect("workspace", slug=workspace.slug)
            elif action == "role":
                membership = services.member_set_role(
                    by=request.user,
                    workspace=workspace,
                    username=username,
                    role=request.POST.get("role", ""),
                )
                messages.success(
                    request,
                    f"{username} is now {membership.get_role_display().lower()}.",
                )
                return redirect("workspace", slug=workspace.slug)
            elif action == "retention":
                if retention_form.is_valid():
                    services.workspace_set_retention(
                        by=request.user,
                        workspace=workspace,
                        days=retention_form.cleaned_data["raw_retention_days"],
                    )
                    messages.success(request, "Raw visit retention saved.")
                    return redirect("workspace", slug=workspace.slug)
            elif action == "api_rate_limit":
                if limit_form.is_valid():
                    limit = limit_form.cleaned_data["api_rate_limit"]
                    services.workspace_set_api_rate_limit(
                        by=request.user, workspace=workspace, api_rate_limit=limit
                    )
                    messages.success(
                        request,
                        f"Its API keys without a limit of their own are limited to {limit} "
                        "requests per minute from now on."
                        if limit is not None
                        else "Its API keys without a limit of their own meet only the overall "
                        "rates.",
                    )
                    return redirect("workspace", slug=workspace.slug)
            elif action in ("remove", "leave"):
                if action == "leave":
                    username = request.user.get_username()
                services.member_remove(by=request.user, workspace=workspace, username=username)
                if username == request.user.get_username():
                    messages.success(request, f"You left {workspace.name}.")
                    return redirect("workspaces")
                messages.success(request, f"Removed {username} from {workspace.name}.")
                return redirect("workspace", slug=workspace.slug)
            else:
                return HttpResponse("Unknown action.", status=400)
        except ValidationError as error:
            if action == "add":
                add_service_errors(add_form, error, renamed={"user": "username"})
            elif action == "retention":
                add_service_errors(retention_form, error)
            elif action == "api_rate_limit":
                add_service_errors(limit_form, error)
            elif action == "privacy":
                add_service_errors(privacy_form, error)
            else:
                row_error = (username, error.messages)
    return render(
        request,
        "workspaces/detail.html",
        {
            "workspace": workspace,
            "members": members_of(workspace),
            "invitations": list(invitations_open_in(workspace)) if manages else [],
            "manages": manages,
            "add_form": add_form,
            "retention_form": retention_form,
            "retention_days": retention_days(workspace),
            "privacy_form": privacy_form,
            "privacy_mode": privacy_mode(workspace.analytics_privacy),
            "limit_form": limit_form,
            "row_error": row_error,
            "roles": Role.choices,
            "is_current": workspace.pk == current_workspace(request).pk,
        },
        status=400
        if (
            add_form.errors
            or retention_form.errors
            or privacy_form.errors
            or limit_form.errors
            or row_error
        )
        else 200,
    )


@login_required
@require_POST
def workspace_switch(request: HttpRequest) -> HttpResponse:
    """The header's switcher: work in another of your workspaces, then back where you were."""
    slug = request.POST.get("workspace", "")
    workspace = next((w for w in my_workspaces(request) if w.slug == slug), None)
    if workspace is None:
        raise Http404("No such workspace.")
    switch_to(request, workspace)
    messages.info(request, f"You are working in {workspace.name} now.")
    # Back to the page it was done on (the header's form: its Referer), else My links.
    back = request.POST.get("next") or request.headers.get("referer", "")
    if not back or not url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back = reverse("dashboard")
    path = urlsplit(back).path or reverse("dashboard")
    # A link's, a tag's or an upload's page, and a filtered list, belong to the workspace left
    # behind: land on the new workspace's list instead.
    if path.startswith(reverse("dashboard")):
        path = reverse("dashboard")
    return redirect(path)


AUDIT_ENTRIES_PER_PAGE = 50


def _shown_value(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, list):
        return ", ".join(str(item) for item in value) or "(none)"
    return str(value) if value != "" else "(empty)"


@login_required
@require_http_methods(["GET"])
def workspace_audit_page(request: HttpRequest, slug: str) -> HttpResponse:
    """A workspace's audit log, for its owners (members: the 403 page; others: 404): every
    change, newest first, filtered by action, who, object and days; a CSV of the same."""
    workspace = _member_workspace_or_404(request, slug)
    ids = audit_workspace_ids(user=request.user, workspace_id=workspace.pk)
    filters = AuditFilterForm(request.GET or None, actions=audit_actions(workspace_ids=ids))
    query = filters.cleaned_data if filters.is_valid() else {}
    entries = audit_entries(workspace_ids=ids, **{k: v for k, v in query.items() if v})
    if request.GET.get("download") == "csv":
        return csv_download(audit_csv_chunks(entries), f"audit-{workspace.slug}.csv")
    page = Paginator(entries, AUDIT_ENTRIES_PER_PAGE).get_page(request.GET.get("page"))
    for entry in page:
        entry.rows = [
            (field, _shown_value(before), _shown_value(after))
            for field, (before, after) in entry.changes.items()
        ]
    return render(
        request,
        "workspaces/audit.html",
        {"workspace": workspace, "filters": filters, "page": page},
        status=200 if filters.is_valid() or not request.GET else 400,
    )
