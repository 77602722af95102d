"""Workspaces: the people who share links. Every user has a personal one; a team workspace has
members with a role. Links, tags, webhooks and import uploads belong to a workspace; a short
domain may be kept for one."""

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from core.api.throttles import MAX_KEY_RATE

SLUG_MAX_LENGTH = 50
# The longest a workspace may keep raw visits (100 years): its owners' page and API
# (services.workspace_set_retention) and the admin's form (the field's validator) alike.
MAX_RETENTION_DAYS = 36500


class Role(models.TextChoices):
    OWNER = "owner", "Owner"  # members and settings, and everything an editor does
    EDITOR = "editor", "Editor"  # creates and changes links
    VIEWER = "viewer", "Viewer"  # reads links and stats


# The roles that may create and change links.
WRITER_ROLES = frozenset({Role.OWNER, Role.EDITOR})
# Most rights first: how members are listed, and who takes over from a deleted user.
ROLE_RANK = {Role.OWNER: 0, Role.EDITOR: 1, Role.VIEWER: 2}
MANAGE_PERMISSION = "workspaces.change_workspace"  # staff who may manage any workspace


class Privacy(models.TextChoices):
    """What a stored visit keeps of its visitor (ANALYTICS_PRIVACY; docs/privacy.md)."""

    FULL = "full", "Full: the address"
    TRUNCATED = "truncated", "Truncated: its network"
    NONE = "none", "None: no address"


class Workspace(models.Model):
    slug = models.SlugField(max_length=SLUG_MAX_LENGTH, unique=True)
    name = models.CharField(max_length=100)
    # Set on each user's own workspace, made with the user; its slug follows the username.
    personal_for = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="personal_workspace",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Days its links' raw visits (VisitRecord) are kept; None: ANALYTICS_RAW_RETENTION_DAYS.
    # Totals, charts and breakdowns outlive them (analytics.services.retention).
    raw_retention_days = models.PositiveIntegerField(
        null=True, blank=True, validators=[MaxValueValidator(MAX_RETENTION_DAYS)]
    )
    # Requests per minute for each of its API keys that sets no rate_limit of its own; null:
    # only the API's global rates (API_READ_RATE, API_WRITE_RATE).
    api_rate_limit = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(MAX_KEY_RATE)]
    )
    # "" follows the deployment's ANALYTICS_PRIVACY; owners may choose another for their visits.
    analytics_privacy = models.CharField(
        "visitor privacy", max_length=10, choices=Privacy.choices, blank=True, default=""
    )

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_personal(self) -> bool:
        return self.personal_for_id is not None


class Membership(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=8, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace", "user"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "user"], name="membership_once"),
            # "Which workspaces is this user in" is asked on every page and API call.
        ]
        indexes = [models.Index(fields=["user", "workspace"], name="membership_user")]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"


class Invitation(models.Model):
    """An owner's offer of a role in a workspace. Only the invitee's acceptance makes a
    Membership; until then nothing is shared with them."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="invitations")
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    # What the inviter typed (a username or an email), the only name of the invitee they see.
    address = models.CharField(max_length=254)
    # The account `address` named when the invitation was made; null when it named none (the
    # inviter is not told: the invitation looks the same to them either way).
    invitee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="workspace_invitations",
    )
    role = models.CharField(max_length=8, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    # Kept from the inviter, who sees a declined invitation as waiting until it expires.
    declined_at = models.DateTimeField(null=True, blank=True)
    accepted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            # "What am I invited to" (the dashboard, the invitee's API) and the owners' list.
            models.Index(fields=["invitee", "expires_at"], name="invitation_invitee"),
            models.Index(fields=["workspace", "expires_at"], name="invitation_workspace"),
        ]

    def __str__(self) -> str:
        return f"{self.address} to {self.workspace} ({self.role})"
