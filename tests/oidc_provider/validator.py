"""The claims the test provider vouches for: each user's e-mail, verified unless the user is in
the group `unverified-email`, and their names."""

from oauth2_provider.oauth2_validators import OAuth2Validator

UNVERIFIED_GROUP = "unverified-email"


class ClaimsValidator(OAuth2Validator):
    def get_additional_claims(self):
        return {
            "email": lambda request: request.user.email,
            "email_verified": lambda request: (
                not request.user.groups.filter(name=UNVERIFIED_GROUP).exists()
            ),
            "given_name": lambda request: request.user.first_name,
            "family_name": lambda request: request.user.last_name,
        }
