from django.apps import AppConfig


class AccountsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        # Registers the start-up check, the sign-in and token hooks and the API key scheme for
        # the docs.
        from accounts import checks, schema, signals  # noqa: F401
        from core.private_files import make_node_files_private

        # Every process of the node starts here, before its first database connection: the
        # files holding sessions, key hashes and webhook secrets are its user's alone.
        make_node_files_private()
