from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "webhooks"

    def ready(self) -> None:
        # The links and analytics apps announce what happened; this app listens (one-way).
        from webhooks import receivers  # noqa: F401
