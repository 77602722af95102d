"""last_used is kept without a database write on every API call."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts import services
from accounts.models import ApiKey

pytestmark = pytest.mark.django_db


def test_last_used_is_written_at_most_once_a_minute(user, django_assert_num_queries):
    api_key, raw_key = services.api_key_create(user=user, name="ci")
    services.api_key_authenticate(raw_key=raw_key)  # first use: written
    first = ApiKey.objects.get(pk=api_key.pk).last_used_at
    assert first is not None

    with django_assert_num_queries(1):  # the lookup only, no UPDATE
        services.api_key_authenticate(raw_key=raw_key)
    assert ApiKey.objects.get(pk=api_key.pk).last_used_at == first

    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=first - timedelta(minutes=2))
    services.api_key_authenticate(raw_key=raw_key)
    assert ApiKey.objects.get(pk=api_key.pk).last_used_at > first - timedelta(seconds=1)
    assert ApiKey.objects.get(pk=api_key.pk).last_used_at <= timezone.now()
