"""Shared plumbing that imports no app: Redis, node state, client IPs, outages, the API base,
form and CSV helpers, GeoIP data. Every app may import it; it imports none of them."""
