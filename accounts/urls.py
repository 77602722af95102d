from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views
from accounts.oidc import ProviderCallbackView, ProviderSignInView

urlpatterns = [
    # Sign in and sign out; accounts are made by staff, so no sign-up or reset.
    path(
        "accounts/login/",
        views.SignInView.as_view(),
        name="login",
    ),
    # Single sign-on (settings.SSO_*): off to the provider, and its answer.
    path("accounts/sso/", ProviderSignInView.as_view(), name="sso_start"),
    path("accounts/sso/callback/", ProviderCallbackView.as_view(), name="sso_callback"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # The password change checks guesses (views).
    path("accounts/password/", views.PasswordChangeView.as_view(), name="password_change"),
    path(
        "accounts/password/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("accounts/api-keys/", views.api_keys, name="api_keys"),
    path("accounts/api-keys/<int:key_id>/revoke/", views.api_key_revoke, name="api_key_revoke"),
    path(
        "accounts/api-keys/<int:key_id>/rate-limit/",
        views.api_key_rate_limit,
        name="api_key_rate_limit",
    ),
    path("accounts/preferences/", views.preferences, name="preferences"),
]
