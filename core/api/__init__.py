"""What every JSON API of the product shares (the native one, the workspaces', webhooks', the
compat layers'): errors as JSON, throttles, scopes, strict fields, pagination, OpenAPI pieces."""
