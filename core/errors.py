"""What a service's refusal means to a caller, whatever the channel.

The services raise their own exceptions (LinkNotFound, WorkspaceNotFound, LinkRevoked…), each a
kind of one of these, so the API's one error handler (core.api.base) can answer them without
knowing the apps that raise them: the apps sit above core and core imports none of them.
"""

from __future__ import annotations


class NotFound(Exception):
    """Nothing there the caller may see (does not exist, or is someone else's: told apart to
    nobody). The API answers 404 with `public_message`."""

    public_message = "Not found."


class Conflict(Exception):
    """The thing's state does not allow the change (a revoked link): 409 with the message."""


class Unavailable(Exception):
    """A part the service needs is out of reach or exhausted for now: 503 with the message
    and Retry-After."""


class FieldProblem(Exception):
    """The request is fine in shape but one of its fields cannot be acted on (a code on several
    domains without `?domain=`): 400 naming `field` with `message`."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message
