import pytest

from webhooks.tests.receiver import start_receiver


@pytest.fixture
def allow_private(settings):
    settings.SHORTURL_WEBHOOK_ALLOW_PRIVATE = True


@pytest.fixture
def receiver(allow_private):
    """A receiver on loopback, reachable because the tests allow private targets."""
    receiver, server = start_receiver()
    yield receiver
    server.shutdown()
    server.server_close()
