"""What a person keeps about themselves: their API keys and their preferences (time zone)."""

from datetime import datetime

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from core.api.scopes import ApiScope  # ApiKey.scopes; all_scopes stays here for a migration
from core.api.throttles import MAX_KEY_RATE


def all_scopes() -> list[str]:
    return [scope.value for scope in ApiScope]


class ApiKey(models.Model):
    """A named key for the REST API, owned by one user, with the scopes it may use and an
    optional expiry, acting for one workspace. Only a hash of the key is stored: the key itself
    is shown once, when it is made. DRF's tokens live here too (drf_token), hashed alike."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys"
    )
    name = models.CharField(max_length=100)
    # The first characters of the key, so its owner can tell keys apart; never enough to use.
    prefix = models.CharField(max_length=16)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Keys made before scopes existed keep every scope (the migration gives them all).
    scopes = models.JSONField(default=all_scopes)
    expires_at = models.DateTimeField(null=True, blank=True)
    # The one workspace the key reads and writes; null (keys made outside the services, such as
    # in tests) acts as a DRF token does, in every workspace of its user.
    workspace = models.ForeignKey(
        "workspaces.Workspace",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="api_keys",
    )

    # A DRF-style token (`manage.py drf_create_token`, or a DRF Token row folded in when saved):
    # it acts as DRF tokens always have, with every scope in every workspace of its user.
    drf_token = models.BooleanField(default=False)
    # Requests per minute this key may make, counted across every process and node
    # (accounts.key_limits); null: its workspace's api_rate_limit, and if that is null too only
    # the API's global rates (API_READ_RATE, API_WRITE_RATE) apply.
    rate_limit = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(MAX_KEY_RATE)]
    )

    class Meta:
        verbose_name = "API key"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and not self.is_expired()

    def is_expired(self, now: datetime | None = None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or timezone.now())

    def allows(self, scope: str) -> bool:
        return self.drf_token or scope in self.scopes

    def requests_per_minute(self) -> int | None:
        """The limit this key's requests meet: its own, else its workspace's default, else
        None (only the global rates). Read by core.api.throttles.KeyRateThrottle."""
        if self.rate_limit is not None:
            return self.rate_limit
        return self.workspace.api_rate_limit if self.workspace_id else None


class ApiKeyWindow(models.Model):
    """Requests one key made in one minute (`window` = Unix time // 60): the embedded mode's
    counter, shared by every process through the database, and the services mode's when Redis
    does not answer. Each key keeps its current and previous windows only."""

    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="+")
    window = models.BigIntegerField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["api_key", "window"], name="api_key_window_once")
        ]

    def __str__(self) -> str:
        return f"{self.api_key_id} @ {self.window}: {self.count}"


class Profile(models.Model):
    """One user's preferences. A missing row means the defaults."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile"
    )
    # An IANA name (Europe/Paris); empty: the browser's zone, else settings.TIME_ZONE.
    time_zone = models.CharField(max_length=64, blank=True, default="")

    def __str__(self) -> str:
        return f"{self.user} ({self.time_zone or 'browser time zone'})"


class PasswordCheckTries(models.Model):
    """Old passwords checked for one user on the password-change pages in the current lockout
    window (settings.LOGIN_LOCKOUT_MINUTES). Counted per user from every address: the threat is
    a stolen session guessing its own password, which may ask from as many addresses as it
    likes. A row is dropped when the right password is given."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    tries = models.PositiveIntegerField(default=0)
    # The latest try; the window runs from it, so each try while paused starts the wait again.
    last_try_at = models.DateTimeField()

    class Meta:
        verbose_name = "password check pause"

    def __str__(self) -> str:
        return f"{self.user}: {self.tries} old password(s) tried"

    def tries_counted(self, now: datetime) -> int:
        """The tries that still count at `now`: none once the window since the last has run."""
        return 0 if self.last_try_at <= now - settings.AXES_COOLOFF_TIME else self.tries

    def is_paused(self, now: datetime) -> bool:
        """The one definition of a pause (services.password_check, selectors)."""
        return self.tries_counted(now) >= settings.AXES_FAILURE_LIMIT


class SsoIdentity(models.Model):
    """A person's account at the single sign-on provider (settings.SSO_ISSUER), linked to their
    user here: later sign-ins find them by the provider's subject, whatever their e-mail becomes
    (accounts.sso)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identities"
    )
    issuer = models.CharField(max_length=255)
    # OIDC's `sub`: stable and unique per issuer, at most 255 ASCII characters (Core 1.0, 2).
    subject = models.CharField(max_length=255)
    email = models.EmailField(blank=True)  # as the provider said at the latest sign-in
    created_at = models.DateTimeField(default=timezone.now)
    last_sign_in_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "single sign-on identity"
        verbose_name_plural = "single sign-on identities"
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="sso_identity_unique")
        ]

    def __str__(self) -> str:
        return f"{self.user} = {self.subject} at {self.issuer}"
