"""factory_boy factories: users and short links as stored rows, without the create path.

Use them where a test only needs a link to exist (pages, API reads, redirects, the admin,
selectors); tests about creating links call links.services.create.link_create instead.

A link made here is a database row only: no cache holds it, so the redirect reads it from the
database on first use. An alias link (`UrlLinkFactory(alias="spring-sale")`) drops the cached
set of aliases, as link_create does, so the redirect finds it at once.
"""

from __future__ import annotations

from datetime import timedelta

import factory
from django.conf import settings
from django.utils import timezone

from links import cache as link_cache
from links.codes import shape
from links.models import CodeType, RedirectType, UrlLink
from links.services.policy import url_hash
from workspaces.selectors import personal_workspace_of

DEFAULT_PASSWORD = "s3cret-pass-0"


class UserFactory(factory.django.DjangoModelFactory):
    """A marketer who can log in with DEFAULT_PASSWORD; `staff=True` makes a superuser.

    The password is hashed with the first of settings.PASSWORD_HASHERS, which the root
    conftest sets to the fast MD5 hasher for tests.
    """

    class Meta:
        model = settings.AUTH_USER_MODEL
        skip_postgeneration_save = True

    class Params:
        staff = factory.Trait(is_staff=True, is_superuser=True)

    username = factory.Sequence(lambda n: f"marketer{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password(DEFAULT_PASSWORD)


def _an_hour_ago():
    return timezone.now() - timedelta(hours=1)


class UrlLinkFactory(factory.django.DjangoModelFactory):
    """An active plain link with a valid generated code (pool type) and its own long URL.

    Params: `alias="spring-sale"` (a custom alias as the code), `revoked=True` (revoked an hour
    ago, expired at the same moment, as link_revoke leaves it), `expired=True` (expired an hour
    ago). Any field can be given as usual; `long_url_hash` always follows `long_url`.
    """

    class Meta:
        model = UrlLink
        skip_postgeneration_save = True

    class Params:
        alias = None
        revoked = factory.Trait(
            revoked_at=factory.LazyFunction(_an_hour_ago),
            expires_at=factory.SelfAttribute("revoked_at"),
        )
        expired = factory.Trait(expires_at=factory.LazyFunction(_an_hour_ago))

    owner = factory.SubFactory(UserFactory)
    # The owner's personal workspace (made with the user), as link_create would choose.
    workspace = factory.LazyAttribute(lambda link: personal_workspace_of(link.owner))
    code = factory.LazyAttribute(lambda link: link.alias or shape.random_code())
    code_type = factory.LazyAttribute(lambda link: CodeType.CUSTOM if link.alias else CodeType.POOL)
    long_url = factory.Sequence(lambda n: f"https://www.example.com/page/{n}")
    long_url_hash = factory.LazyAttribute(lambda link: url_hash(link.long_url))
    title = ""
    redirect_type = RedirectType.FOUND
    expires_at = None
    revoked_at = None

    @factory.post_generation
    def drop_cached_alias_set(link, create, extracted, **kwargs):
        """A redirect may already hold the alias set without this alias: drop it."""
        if create and link.code_type == CodeType.CUSTOM:
            link_cache.forget_aliases()
