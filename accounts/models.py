"""What a person keeps about themselves: their API keys and their preferences (time zone)."""

from django.conf import settings
from django.db import models


class ApiKey(models.Model):
    """A named key for the REST API, owned by one user. Only a hash of the key is stored: the
    key itself is shown once, when it is made. Room to grow: scopes and workspaces (#16)."""

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

    class Meta:
        verbose_name = "API key"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class Profile(models.Model):
    """One user's preferences. A missing row means the defaults."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile"
    )
    # An IANA name (Europe/Paris); empty: the browser's zone, else settings.TIME_ZONE.
    time_zone = models.CharField(max_length=64, blank=True, default="")

    def __str__(self) -> str:
        return f"{self.user} ({self.time_zone or 'browser time zone'})"
