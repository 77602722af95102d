from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _ensure_default_domain(**kwargs) -> None:
    from links.services.domains import ensure_default_domain

    ensure_default_domain()


def _stop_imports_of_departed_member(sender, *, user, workspace_id, why, **kwargs) -> None:
    from links.imports.service import link_imports_stop_for_departed_member

    link_imports_stop_for_departed_member(user=user, workspace_id=workspace_id)


class LinksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "links"
    verbose_name = "Links"

    def ready(self) -> None:
        # A flush (tests) empties the domain table after migration 0008 made the default row;
        # Django sends post_migrate after a flush too.
        post_migrate.connect(_ensure_default_domain, sender=self)
        from workspaces.events import member_departed

        # A member who leaves (or is made a viewer, or deleted) stops importing into the
        # workspace: their uploads there fail with the reason.
        member_departed.connect(
            _stop_imports_of_departed_member, dispatch_uid="links.imports_of_departed_member"
        )
