"""`manage.py drf_create_token USER`: DRF's command, with the token kept only as a hash.

It prints `Generated token <40 hex characters> for user <name>` as DRF's does; the token is shown
this once (DRF printed the stored one again on each run; nothing is stored to print now). Each
run makes a new token; `-r` revokes the user's earlier ones first. They are listed, and can be
revoked, on the user's API keys page and in the admin (API keys).
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from accounts.services import api_token_create


class Command(BaseCommand):
    help = "Create an API token for a user (every scope, every workspace of theirs); shown once."

    def add_arguments(self, parser):
        parser.add_argument("username", type=str)
        parser.add_argument(
            "-r",
            "--reset",
            action="store_true",
            dest="reset_token",
            default=False,
            help="Revoke the user's earlier tokens made by this command, then make a new one.",
        )

    def handle(self, *args, **options):
        username = options["username"]
        User = get_user_model()
        try:
            user = User._default_manager.get_by_natural_key(username)
        except User.DoesNotExist:
            raise CommandError(f"Cannot create the Token: user {username} does not exist") from None
        _api_key, raw_key = api_token_create(user=user, reset=options["reset_token"])
        self.stdout.write(f"Generated token {raw_key} for user {username}")
