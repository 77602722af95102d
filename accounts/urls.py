from django.urls import path

from . import views

urlpatterns = [
    path("accounts/api-keys/", views.api_keys, name="api_keys"),
    path("accounts/api-keys/<int:key_id>/revoke/", views.api_key_revoke, name="api_key_revoke"),
    path("accounts/preferences/", views.preferences, name="preferences"),
]
