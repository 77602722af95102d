"""A subset of Shlink's REST API v3 under /rest/, so Shlink clients and dashboards work against
shorturl (docs/api-shlink.md)."""
