from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views

urlpatterns = [
    # Sign in and sign out; accounts are made by staff, so no sign-up or reset.
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=True),
        name="login",
    ),
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
