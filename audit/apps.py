from django.apps import AppConfig


class AuditConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "audit"
    verbose_name = "Audit log"

    def ready(self) -> None:
        from audit import signals  # noqa: F401  (admin sign-ins)
