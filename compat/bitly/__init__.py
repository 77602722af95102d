"""Bitly's API v4 over the links services and the click stats (docs/api-bitly.md)."""
