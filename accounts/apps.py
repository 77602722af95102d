from django.apps import AppConfig


class AccountsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        # Registers the start-up check and the API key scheme for drf-spectacular's docs.
        from . import checks, schema  # noqa: F401
