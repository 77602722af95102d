"""How the API docs describe API keys (drf-spectacular finds extensions by import)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.ApiKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": (
                "`Token <key>`: make a key on your API keys page (/accounts/api-keys/), or ask an "
                "administrator for a token (`manage.py drf_create_token USER`)."
            ),
        }
