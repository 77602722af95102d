# One image for web, worker and beat.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
RUN apt-get update \
 && apt-get install -y --no-install-recommends pkg-config libmariadb-dev build-essential curl \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements.txt .
RUN pip install -r requirements.txt
COPY . .
RUN SECRET_KEY=collectstatic-only DEBUG=0 python manage.py collectstatic --noinput

RUN useradd --create-home --uid 1000 shorturl
USER shorturl
EXPOSE 8000
CMD ["gunicorn", "shorturl_project.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "4", "--access-logfile", "-"]
