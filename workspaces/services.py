"""Writes of workspaces and their members, and the one rule every link write goes through:
which workspace a write lands in and whether the caller may write there."""

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.validators import validate_slug
from django.db import IntegrityError, transaction

from audit.services import audit_change, snapshot
from core.api.throttles import key_rate_problem
from core.db import retry_on_conflict, take_turn
from workspaces import events
from workspaces.models import (
    MAX_RETENTION_DAYS,
    ROLE_RANK,
    SLUG_MAX_LENGTH,
    WRITER_ROLES,
    Membership,
    Privacy,
    Role,
    Workspace,
)
from workspaces.selectors import (
    PERSONAL_SUFFIX,
    WorkspaceNotFound,
    manage_required,
    name_slug,
    role_in,
    slug_is_a_users,
    workspace_get,
)

# Slugs a team workspace may not take: the workspace pages' own paths (/workspaces/switch/).
RESERVED_TEAM_SLUGS = frozenset({"switch"})


def _free_personal_slug(username: str) -> str:
    """The username's slug, else (another workspace holds it) that slug with "--2", "--3"…,
    which no username gives (PERSONAL_SUFFIX), so a personal workspace never takes the slug of
    another user's name."""
    base = name_slug(username)
    slug, n = base, 1
    while Workspace.objects.filter(slug=slug).exists():
        n += 1
        suffix = f"{PERSONAL_SUFFIX}{n}"
        slug = base[: SLUG_MAX_LENGTH - len(suffix)] + suffix
    return slug


def _team_slug_refusal(slug: str) -> str | None:
    """Why a team workspace may not take `slug`, or None. A slug of a user's name stays theirs:
    a team holding it could pass for that user's own workspace ("newuser" made by someone else,
    the user's own then "newuser--2"). A name's slug for an account made later is kept for
    that account's owner by workspace_get instead."""
    if slug in RESERVED_TEAM_SLUGS or PERSONAL_SUFFIX in slug:
        return f"The slug {slug!r} is reserved."
    if Workspace.objects.filter(slug=slug).exists() or slug_is_a_users(slug):
        return f"The slug {slug!r} is taken."
    return None


def _free_team_slug(name: str) -> str:
    base = name_slug(name)
    slug, n = base, 1
    while _team_slug_refusal(slug) is not None:
        n += 1
        slug = f"{base}-{n}"
    return slug


def personal_workspace_ensure(user: AbstractBaseUser) -> Workspace:
    """`user`'s personal workspace, made (with them as its owner) when missing."""
    try:
        return Workspace.objects.get(personal_for_id=user.pk)
    except Workspace.DoesNotExist:
        pass
    for _ in range(3):  # two first requests of a new user may race for it, or for a slug
        try:
            with transaction.atomic():
                workspace = Workspace.objects.create(
                    slug=_free_personal_slug(user.get_username()),
                    name=user.get_username(),
                    personal_for_id=user.pk,
                )
                Membership.objects.create(workspace=workspace, user_id=user.pk, role=Role.OWNER)
                return workspace
        except IntegrityError:
            found = Workspace.objects.filter(personal_for_id=user.pk).first()
            if found is not None:
                return found
    raise RuntimeError(f"could not make a personal workspace for {user.pk}")


def personal_workspaces_ensure_all(*, using: str = "default") -> int:
    """A personal workspace for every user without one (users saved raw, which post_save does
    not see); run after each `migrate`. The number made."""
    User = get_user_model()
    missing = User.objects.using(using).exclude(
        pk__in=Workspace.objects.using(using)
        .filter(personal_for__isnull=False)
        .values("personal_for_id")
    )
    made = 0
    for user in missing.iterator():
        personal_workspace_ensure(user)
        made += 1
    return made


def workspace_for_writing(
    *, user: AbstractBaseUser, workspace: "Workspace | str | None", pinned_id: int | None = None
) -> Workspace:
    """The workspace a link write by `user` lands in: the one named (a Workspace or a slug),
    else the key's pinned one, else the user's personal workspace.

    A slug the user does not belong to, or another than a pinned key's: ValidationError on
    `workspace` (nothing tells it apart from a slug that does not exist). A member who may only
    read: PermissionDenied. Staff write where they are members, as everyone else.
    """
    if isinstance(workspace, Workspace):
        found = workspace
    elif workspace:
        try:
            found = workspace_get(user=user, slug=workspace)
        except WorkspaceNotFound:
            raise ValidationError(
                {"workspace": f"No workspace {workspace!r} that you belong to."}, code="invalid"
            ) from None
    elif pinned_id is not None:
        found = Workspace.objects.get(pk=pinned_id)
    else:
        return personal_workspace_ensure(user)
    if pinned_id is not None and found.pk != pinned_id:
        raise ValidationError(
            {"workspace": "This API key acts for another workspace."}, code="invalid"
        )
    if role_in(user=user, workspace_id=found.pk) not in WRITER_ROLES:
        raise PermissionDenied(
            f"Viewers of the workspace {found.slug!r} cannot create or change its links."
        )
    return found


def workspace_create(*, user: AbstractBaseUser, name: str, slug: str = "") -> Workspace:
    """A new team workspace with `user` as its owner."""
    name = (name or "").strip()
    errors = {}
    if not name:
        errors["name"] = ["Give the workspace a name."]
    elif len(name) > 100:
        errors["name"] = ["At most 100 characters."]
    slug = (slug or "").strip().lower()
    if slug:
        try:
            validate_slug(slug)
        except ValidationError as exc:
            errors["slug"] = exc.messages
        else:
            if len(slug) > SLUG_MAX_LENGTH:
                errors["slug"] = [f"At most {SLUG_MAX_LENGTH} characters."]
            elif refusal := _team_slug_refusal(slug):
                errors["slug"] = [refusal]
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        try:
            workspace = Workspace.objects.create(slug=slug or _free_team_slug(name), name=name)
        except IntegrityError:
            raise ValidationError({"slug": [f"The slug {slug!r} is taken."]}) from None
        membership = Membership.objects.create(
            workspace=workspace, user_id=user.pk, role=Role.OWNER
        )
        audit_change("workspace.create", workspace, actor=user, workspace_id=workspace.pk)
        audit_change("membership.create", membership, actor=user)
    workspace.role = Role.OWNER
    return workspace


def _workspace_field_set(*, by: AbstractBaseUser, workspace: Workspace, field: str, value):
    """Save one of the workspace's own settings (checked by the caller) and its audit entry, in
    one transaction: every owner's change of a workspace is recorded the same way."""
    before = snapshot(workspace)
    setattr(workspace, field, value)
    with transaction.atomic():
        workspace.save(update_fields=[field])
        audit_change(
            "workspace.update", workspace, actor=by, before=before, workspace_id=workspace.pk
        )
    return workspace


def workspace_rename(*, by: AbstractBaseUser, workspace: Workspace, name: str) -> Workspace:
    manage_required(user=by, workspace=workspace)
    name = (name or "").strip()
    if not name or len(name) > 100:
        raise ValidationError({"name": ["Give the workspace a name of at most 100 characters."]})
    return _workspace_field_set(by=by, workspace=workspace, field="name", value=name)


def workspace_set_retention(
    *, by: AbstractBaseUser, workspace: Workspace, days: int | None
) -> Workspace:
    """Keep the workspace's raw visits `days` days (None: the install's
    ANALYTICS_RAW_RETENTION_DAYS); the next retention pass applies it (analytics.services.
    retention). Its owners only."""
    manage_required(user=by, workspace=workspace)
    if days is not None and not 0 <= days <= MAX_RETENTION_DAYS:
        raise ValidationError(
            {"raw_retention_days": [f"Give a number of days from 0 to {MAX_RETENTION_DAYS}."]}
        )
    return _workspace_field_set(by=by, workspace=workspace, field="raw_retention_days", value=days)


def workspace_set_api_rate_limit(
    *, by: AbstractBaseUser, workspace: Workspace, api_rate_limit: int | None
) -> Workspace:
    """The requests per minute each of the workspace's API keys may make when it sets no limit
    of its own (None: only the API's global rates). Owners only; it binds from the next
    request of every key (accounts.key_limits)."""
    manage_required(user=by, workspace=workspace)
    problem = key_rate_problem(api_rate_limit)
    if problem:
        raise ValidationError({"api_rate_limit": [problem]})
    return _workspace_field_set(
        by=by, workspace=workspace, field="api_rate_limit", value=api_rate_limit
    )


def workspace_set_privacy(*, by: AbstractBaseUser, workspace: Workspace, privacy: str) -> Workspace:
    """Choose what the workspace's stored visits keep of their visitors (Privacy; "" follows the
    deployment's ANALYTICS_PRIVACY). Owners only. From the next visit stored on: visits stored
    before keep what they have, and no total changes."""
    manage_required(user=by, workspace=workspace)
    if privacy not in ("", *Privacy.values):
        raise ValidationError(
            {"analytics_privacy": [f"Choose one of {', '.join(Privacy.values)}, or ''."]}
        )
    return _workspace_field_set(
        by=by, workspace=workspace, field="analytics_privacy", value=privacy
    )


def _check_role(role: str) -> str:
    if role not in Role.values:
        raise ValidationError({"role": [f"One of {', '.join(Role.values)}."]}, code="invalid")
    return role


def _user_named(username: str) -> AbstractBaseUser:
    User = get_user_model()
    username = (username or "").strip()
    user = User._default_manager.filter(**{User.USERNAME_FIELD: username}).first()
    if user is None and "@" in username:
        user = User._default_manager.filter(email__iexact=username).first()
    if user is None:
        raise ValidationError({"user": [f"No user {username!r}."]}, code="invalid")
    return user


@retry_on_conflict
def member_add(
    *, by: AbstractBaseUser, workspace: Workspace, username: str, role: str
) -> Membership:
    """Add a user (by username or email) with a role at once; an existing member gets the new
    role. No consent asked: for trusted code only (manage.py commands, fixtures). People add
    someone by invitation (workspaces.invitations), which the invitee accepts."""
    manage_required(user=by, workspace=workspace)
    role = _check_role(role)
    user = _user_named(username)
    with transaction.atomic():
        # The owners' turn first, as member_set_role (called below for a new role) takes it:
        # one order of locks for both.
        take_turn(_owners_turn(workspace))
        membership, created = Membership.objects.select_for_update().get_or_create(
            workspace=workspace, user=user, defaults={"role": role}
        )
        if not created and membership.role != role:
            return member_set_role(by=by, workspace=workspace, username=username, role=role)
        if created:
            audit_change("membership.create", membership, actor=by)
    return membership


@retry_on_conflict
def member_grant(*, workspace: Workspace, user: AbstractBaseUser, role: str) -> Membership:
    """Make `user` a member as the deployment's configuration says (single sign-on's default
    workspace and role): no one's consent asked, recorded as the user's own joining. An existing
    member keeps their role, higher or lower."""
    role = _check_role(role)
    with transaction.atomic():
        membership, created = Membership.objects.get_or_create(
            workspace=workspace, user=user, defaults={"role": role}
        )
        if created:
            audit_change("membership.create", membership, actor=user)
    return membership


def _keep_an_owner(workspace: Workspace, membership: Membership) -> None:
    if workspace.personal_for_id == membership.user_id:
        raise ValidationError(
            {"user": ["A personal workspace's own user stays its owner."]}, code="invalid"
        )
    if (
        membership.role == Role.OWNER
        and not Membership.objects.filter(workspace=workspace, role=Role.OWNER)
        .exclude(pk=membership.pk)
        .exists()
    ):
        raise ValidationError(
            {"user": ["A workspace keeps at least one owner: make someone else owner first."]},
            code="invalid",
        )


@retry_on_conflict
def member_set_role(
    *, by: AbstractBaseUser, workspace: Workspace, username: str, role: str
) -> Membership:
    manage_required(user=by, workspace=workspace)
    role = _check_role(role)
    user = _user_named(username)
    with transaction.atomic():
        membership = _membership_locked(workspace, user)
        if role != Role.OWNER:
            _keep_an_owner(workspace, membership)
        was_writer = membership.role in WRITER_ROLES
        before = snapshot(membership)
        membership.role = role
        membership.save(update_fields=["role"])
        audit_change("membership.update", membership, actor=by, before=before)
        if was_writer and role not in WRITER_ROLES:
            events.member_departed_send(user=user, workspace_id=workspace.pk, why=events.DEMOTED)
    return membership


@retry_on_conflict
def member_remove(*, by: AbstractBaseUser, workspace: Workspace, username: str) -> None:
    """Owners remove anyone; any member may leave. The last owner and a personal workspace's
    own user stay."""
    user = _user_named(username)
    if user.pk != by.pk:
        manage_required(user=by, workspace=workspace)
    with transaction.atomic():
        membership = _membership_locked(workspace, user)
        _keep_an_owner(workspace, membership)
        audit_change(
            "membership.delete", membership, actor=by, before=snapshot(membership), after={}
        )
        membership.delete()
        events.member_departed_send(user=user, workspace_id=workspace.pk, why=events.REMOVED)


def _owners_turn(workspace: Workspace) -> str:
    return f"workspace:{workspace.pk}:owners"


def _membership_locked(workspace: Workspace, user: AbstractBaseUser) -> Membership:
    """`user`'s membership, read once the workspace's owners' turn is this transaction's: role
    changes and removals in one workspace take turns, so two owners demoting or removing each
    other at once keep one owner (the second sees the first's change in _keep_an_owner).

    A turn (core.db.take_turn), not SELECT … FOR UPDATE on the owners' rows: on a Galera cluster
    that lock holds on the local node only and is not certified, and the two changes write
    different rows, so two nodes could both pass it and both commit, leaving no owner. The
    turn's row is written by both: the later commit fails its certification (1213) and is run
    again (retry_on_conflict), now seeing the other's change."""
    take_turn(_owners_turn(workspace))
    try:
        # Locked too: writers that take no turn (a new member's row) may touch it.
        return Membership.objects.select_for_update().get(workspace=workspace, user=user)
    except Membership.DoesNotExist:
        raise ValidationError(
            {"user": [f"{user.get_username()} is not a member of {workspace.slug}."]},
            code="invalid",
        ) from None


def team_heir(*, workspace_id: int, leaving_user_id: int) -> int | None:
    """The member who takes over what a leaving (deleted) user made in a workspace: another
    owner, else the longest-standing other member (an editor before a viewer), whom
    workspaces_keep_owners makes owner as the user is deleted. None for the user's own
    personal workspace, which goes with them, and for a workspace nobody else is in.

    A read only: Django asks it while it collects what a delete would take, which the admin
    also does to show its "Are you sure?" page."""
    others = list(
        Membership.objects.filter(workspace_id=workspace_id)
        .exclude(workspace__personal_for_id=leaving_user_id)
        .exclude(user_id=leaving_user_id)
        .order_by("created_at", "pk")
    )
    if not others:
        return None
    # Most rights first; min() keeps the longest-standing of equals (`others` is by join date).
    return min(others, key=lambda membership: ROLE_RANK[membership.role]).user_id


def workspaces_keep_owners(user: AbstractBaseUser) -> None:
    """As `user` is deleted: each team workspace they were the only owner of gets its heir
    (team_heir) as owner, so it keeps one; and what they made there that acts on its own
    (webhooks, imports) is stopped (events.member_departed) before it passes to the heir."""
    events.member_departed_send(user=user, workspace_id=None, why=events.DELETED)
    sole_owner_of = (
        Membership.objects.filter(user_id=user.pk, role=Role.OWNER)
        .exclude(workspace__personal_for_id=user.pk)
        .values_list("workspace_id", flat=True)
    )
    for workspace_id in list(sole_owner_of):
        others = Membership.objects.filter(workspace_id=workspace_id).exclude(user_id=user.pk)
        if others.filter(role=Role.OWNER).exists():
            continue
        heir = team_heir(workspace_id=workspace_id, leaving_user_id=user.pk)
        if heir is not None:
            others.filter(user_id=heir).update(role=Role.OWNER)
