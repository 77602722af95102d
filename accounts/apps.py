from django.apps import AppConfig


class AccountsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        # Registers the start-up check, the sign-in hook and the API key scheme for the docs.
        from . import checks, schema, signals  # noqa: F401
