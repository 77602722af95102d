from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _ensure_default_domain(**kwargs) -> None:
    from .services.domains import ensure_default_domain

    ensure_default_domain()


class LinksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "links"
    verbose_name = "Links"

    def ready(self) -> None:
        # A flush (tests) empties the domain table after migration 0008 made the default row;
        # Django sends post_migrate after a flush too.
        post_migrate.connect(_ensure_default_domain, sender=self)
