# GeoIP data (docs/analytics.md, "GeoIP data"): what `make` puts in data/geoip/, fetched from
# the npm registry in a stage of its own, so that the image carries the data but not Node.js.
# Debian's Python (3.11) and maxminddb are all scripts/geodata.py needs besides npm.
FROM debian:bookworm-slim AS geodata
RUN apt-get update \
 && apt-get install -y --no-install-recommends npm ca-certificates python3 python3-maxminddb \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY analytics/__init__.py core/geodata.py analytics/
COPY scripts/geodata.py scripts/
RUN python3 scripts/geodata.py

# One image for web, worker and beat. The web container starts like `make serve` does
# (scripts/serve: migrate, collectstatic, granian with WEB_CONCURRENCY x WEB_THREADS).
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 HOST=0.0.0.0 PORT=8000
RUN apt-get update \
 && apt-get install -y --no-install-recommends pkg-config libmariadb-dev build-essential curl \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements.txt .
RUN pip install -r requirements.txt
COPY . .
COPY --from=geodata /app/data/geoip data/geoip
RUN SECRET_KEY=collectstatic-only DEBUG=0 python manage.py collectstatic --noinput

# The server user may refresh static files at start; /data holds an embedded-mode SQLite file
# (DATABASE_URL=sqlite:////data/db.sqlite3) when no MySQL is used.
RUN useradd --create-home --uid 1000 shorturl \
 && mkdir -p /data && chown -R shorturl /app/staticfiles /data
USER shorturl
EXPOSE 8000
CMD ["scripts/serve"]
