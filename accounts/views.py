"""The signed-in user's own pages: API keys, password change and preferences."""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin import AdminSite
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts import selectors, services, sso
from accounts.forms import (
    ApiKeyCreateForm,
    ApiKeyRateLimitForm,
    GuardedPasswordChangeForm,
    TimeZoneForm,
)
from accounts.middleware import SESSION_TIME_ZONE, database_converts_time_zones
from accounts.models import ApiKey
from core.forms import add_service_errors
from core.login_attempts import ANSWERED_BY_VIEW, lockout_seconds
from workspaces.current import current_workspace

# The new key travels to the page after the redirect in the session, and is dropped there.
NEW_KEY_SESSION = "accounts.new_api_key"


@never_cache  # the page may hold a new key: no copy of it in any cache
@login_required
@require_http_methods(["GET", "POST"])
def api_keys(request: HttpRequest) -> HttpResponse:
    form = ApiKeyCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            api_key, raw_key = services.api_key_create(
                user=request.user,
                name=form.cleaned_data["name"],
                scopes=form.cleaned_data["scopes"],
                expires_at=form.expires_at(),
                workspace=current_workspace(request),
                rate_limit=form.cleaned_data["rate_limit"],
            )
        except ValidationError as error:
            add_service_errors(form, error)
        else:
            request.session[NEW_KEY_SESSION] = {"id": api_key.pk, "key": raw_key}
            return redirect("api_keys")
    return render(
        request,
        "accounts/api_keys.html",
        {
            "form": form,
            "keys": selectors.api_key_list(user=request.user),
            "new_key": request.session.pop(NEW_KEY_SESSION, None),
        },
    )


@login_required
@require_POST
def api_key_revoke(request: HttpRequest, key_id: int) -> HttpResponse:
    try:
        api_key = services.api_key_revoke(key_id=key_id, user=request.user)
    except ApiKey.DoesNotExist:
        raise Http404("No such API key.") from None
    messages.success(request, f"Revoked the key “{api_key.name}”: it is refused from now on.")
    return redirect("api_keys")


@login_required
@require_POST
def api_key_rate_limit(request: HttpRequest, key_id: int) -> HttpResponse:
    form = ApiKeyRateLimitForm(request.POST)
    try:
        if form.is_valid():
            api_key = services.api_key_set_rate_limit(
                key_id=key_id, user=request.user, rate_limit=form.cleaned_data["rate_limit"]
            )
    except ApiKey.DoesNotExist:
        raise Http404("No such API key.") from None
    except ValidationError as error:
        add_service_errors(form, error)
    if form.errors:  # the form's refusal or the service's, told the same way
        for problem in form.errors.get("rate_limit", []):
            messages.error(request, f"Requests per minute: {problem}")
        return redirect("api_keys")
    limit = (
        f"{api_key.rate_limit} requests per minute"
        if api_key.rate_limit
        else "its workspace's default"
    )
    messages.success(request, f"The key “{api_key.name}” is limited to {limit} from now on.")
    return redirect("api_keys")


@login_required
@require_http_methods(["GET", "POST"])
def preferences(request: HttpRequest) -> HttpResponse:
    current = selectors.profile_time_zone(user=request.user)
    form = TimeZoneForm(
        request.POST or None,
        initial={"time_zone": current},
        zone_names=services.time_zone_names(),
    )
    if request.method == "POST" and form.is_valid():
        try:
            profile = services.profile_set_time_zone(
                user=request.user, time_zone=form.cleaned_data["time_zone"]
            )
            request.session[SESSION_TIME_ZONE] = profile.time_zone
        except ValidationError as error:
            form.add_error("time_zone", error.message_dict["time_zone"])
        else:
            messages.success(request, "Saved: times are now shown in your chosen zone.")
            return redirect("preferences")
    return render(
        request,
        "accounts/preferences.html",
        {"form": form, "zones_unavailable": not database_converts_time_zones()},
    )


def password_checks_paused_page(request: HttpRequest) -> HttpResponse:
    """429 for a person: too many wrong old passwords, when to try again, whom to ask."""
    seconds = lockout_seconds()
    response = render(
        request,
        "accounts/password_checks_paused.html",
        {"minutes": round(seconds / 60)},
        status=429,
    )
    response["Retry-After"] = str(seconds)  # each try meanwhile starts the wait again
    # This page, not axes' sign-in lockout page, when the try also locked sign-in from here.
    setattr(response, ANSWERED_BY_VIEW, True)
    return response


def sign_in_methods() -> dict:
    """What the sign-in pages offer: the provider's button (its name; None while single sign-on
    is off) and the password form (off with LOCAL_PASSWORDS)."""
    return {
        "sso_name": settings.SSO_NAME if sso.enabled() else None,
        "local_passwords": settings.LOCAL_PASSWORDS,
    }


class SignInView(auth_views.LoginView):
    """Django's sign-in page, offering the provider's sign-in when single sign-on is on."""

    redirect_authenticated_user = True

    def get_context_data(self, **kwargs) -> dict:
        return {**super().get_context_data(**kwargs), **sign_in_methods()}


def admin_login(request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
    """The admin's sign-in page, offering the provider's sign-in as the site's does."""
    context = {**sign_in_methods(), **(extra_context or {})}
    return AdminSite.login(admin.site, request, extra_context=context)


class PasswordChangeView(auth_views.PasswordChangeView):
    """Django's password change, with the old-password guess limit (services.password_check);
    a page saying why instead, for an account with no password here (made by single sign-on)
    or while LOCAL_PASSWORDS is off."""

    form_class = GuardedPasswordChangeForm

    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        user = request.user
        if user.is_authenticated and (
            not settings.LOCAL_PASSWORDS or not user.has_usable_password()
        ):
            return render(request, "accounts/no_password.html", sign_in_methods())
        return super().dispatch(request, *args, **kwargs)

    def get_form_kwargs(self) -> dict:
        return {**super().get_form_kwargs(), "request": self.request}

    def get(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if selectors.password_checks_paused(user=request.user):
            return password_checks_paused_page(request)  # before anyone types in vain
        return super().get(request, *args, **kwargs)

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            return super().post(request, *args, **kwargs)
        except services.PasswordChecksPaused:
            return password_checks_paused_page(request)


def admin_password_change(request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
    """The admin's own password change (AdminSite.password_change with the guarded form), so a
    staff session cannot guess its password there either."""
    request.current_app = admin.site.name
    return PasswordChangeView.as_view(
        success_url=reverse("admin:password_change_done", current_app=admin.site.name),
        extra_context={**admin.site.each_context(request), **(extra_context or {})},
    )(request)
