from django.apps import AppConfig


class CoreConfig(AppConfig):
    """The lowest layer: helpers every app uses, and the few tables of its own they share
    (core.models.Turn)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        from core import checks  # noqa: F401 - registers the Redis settings' start-up check
