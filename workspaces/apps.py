from django.apps import AppConfig
from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.db.models.signals import post_migrate, post_save, pre_delete


def _personal_workspace_for_new_user(sender, instance, created, raw=False, **kwargs) -> None:
    if created and not raw:
        from workspaces.services import personal_workspace_ensure

        personal_workspace_ensure(instance)


def _personal_workspace_at_sign_in(sender, user, **kwargs) -> None:
    # A user saved raw (a fixture, a restored dump) got no workspace from post_save.
    from workspaces.services import personal_workspace_ensure

    personal_workspace_ensure(user)


def _personal_workspaces_after_migrate(sender, **kwargs) -> None:
    from workspaces.services import personal_workspaces_ensure_all

    personal_workspaces_ensure_all(using=kwargs.get("using", "default"))


def _keep_owners_as_a_user_goes(sender, instance, **kwargs) -> None:
    # pre_delete: sent by the delete itself (inside its transaction), never by the admin's
    # confirmation page, which only collects.
    from workspaces.services import workspaces_keep_owners

    workspaces_keep_owners(instance)


class WorkspacesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "workspaces"
    verbose_name = "Workspaces"

    def ready(self) -> None:
        post_save.connect(
            _personal_workspace_for_new_user,
            sender=settings.AUTH_USER_MODEL,
            dispatch_uid="workspaces.personal_workspace_for_new_user",
        )
        user_logged_in.connect(
            _personal_workspace_at_sign_in,
            dispatch_uid="workspaces.personal_workspace_at_sign_in",
        )
        post_migrate.connect(
            _personal_workspaces_after_migrate,
            sender=self,
            dispatch_uid="workspaces.personal_workspaces_after_migrate",
        )
        pre_delete.connect(
            _keep_owners_as_a_user_goes,
            sender=settings.AUTH_USER_MODEL,
            dispatch_uid="workspaces.keep_owners_as_a_user_goes",
        )
