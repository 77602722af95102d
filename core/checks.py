"""Start-up checks of the infrastructure settings (registered by CoreConfig.ready)."""

from django.conf import settings
from django.core.checks import Error, register

from core.redis_config import sentinel_problems


@register("caches")
def redis_sentinel_settings(app_configs, **kwargs) -> list[Error]:
    """REDIS_SENTINELS that cannot be used as written, said at start-up (migrate, check, the
    development server) rather than at the first cache call."""
    return [
        Error(
            problem,
            hint="REDIS_SENTINELS=host1:26379,host2:26379,host3:26379 (docs/operations.md, "
            '"Redis Sentinel").',
            id="core.E001",
        )
        for problem in sentinel_problems(
            sentinels=settings.REDIS_SENTINELS, cluster=settings.REDIS_CLUSTER
        )
    ]
