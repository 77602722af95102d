"""For data migrations (historical models only): every user's personal workspace, made where
missing. Each migration that moves rows into personal workspaces asks for them itself, since
users may be added between workspaces 0002 and it (the signal does not run for historical
models)."""

from django.conf import settings
from django.utils.text import slugify


def personal_workspace_ids(apps) -> dict[int, int]:
    """{user id: their personal workspace's id}, for every user."""
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    Workspace = apps.get_model("workspaces", "Workspace")
    Membership = apps.get_model("workspaces", "Membership")
    personal = dict(
        Workspace.objects.filter(personal_for__isnull=False).values_list("personal_for_id", "pk")
    )
    taken = set(Workspace.objects.values_list("slug", flat=True))
    username_field = getattr(User, "USERNAME_FIELD", "username")
    for user in User.objects.exclude(pk__in=list(personal)).order_by("pk").iterator():
        username = str(getattr(user, username_field))
        base = (slugify(username) or "workspace")[:46].strip("-") or "workspace"
        slug, n = base, 1
        while slug in taken:
            n += 1
            slug = f"{base}-{n}"
        taken.add(slug)
        workspace = Workspace.objects.create(slug=slug, name=username, personal_for_id=user.pk)
        Membership.objects.create(workspace=workspace, user_id=user.pk, role="owner")
        personal[user.pk] = workspace.pk
    return personal


def move_rows_into_personal_workspaces(
    apps, app_label: str, model_name: str, user_field: str
) -> None:
    """Give every row of the model that has no workspace yet its user's personal workspace
    (`user_field`: the id column naming that user, e.g. "owner_id")."""
    personal = personal_workspace_ids(apps)
    model = apps.get_model(app_label, model_name)
    rows = model.objects.filter(workspace__isnull=True)
    for user_id in set(rows.values_list(user_field, flat=True)):
        rows.filter(**{user_field: user_id}).update(workspace_id=personal[user_id])
