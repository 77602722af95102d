from django.urls import path

from webhooks import views

urlpatterns = [
    path("dashboard/webhooks/", views.webhooks_page, name="webhooks"),
    path(
        "dashboard/webhooks/<int:webhook_id>/delete/", views.webhook_delete, name="webhook_delete"
    ),
    path(
        "dashboard/webhooks/<int:webhook_id>/toggle/", views.webhook_toggle, name="webhook_toggle"
    ),
    path("dashboard/webhooks/<int:webhook_id>/test/", views.webhook_test, name="webhook_test"),
]
