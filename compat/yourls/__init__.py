"""YOURLS's API (`/yourls-api.php`) over the links services (docs/api-yourls.md)."""
