from django.urls import path

from webhooks.api.views import (
    WebhookDeliveriesView,
    WebhookDetailView,
    WebhookListCreateView,
    WebhookTestView,
)

urlpatterns = [
    path("webhooks/", WebhookListCreateView.as_view(), name="api-webhook-list"),
    path("webhooks/<int:webhook_id>/", WebhookDetailView.as_view(), name="api-webhook-detail"),
    path(
        "webhooks/<int:webhook_id>/deliveries/",
        WebhookDeliveriesView.as_view(),
        name="api-webhook-deliveries",
    ),
    path("webhooks/<int:webhook_id>/test/", WebhookTestView.as_view(), name="api-webhook-test"),
]
