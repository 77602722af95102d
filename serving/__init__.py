"""The redirect hot path, read top to bottom: hotpath (the WSGI front) → redirect (resolve a
code) → gates (password, cap, targeting) → unlock (the password page); not_found_limit throttles
guessers. It reads links through links.cache and records visits through analytics.capture;
fused_read does both in one Redis call (the cache read and the visit push)."""
