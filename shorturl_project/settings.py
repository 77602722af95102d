"""Settings for shorturl, all read from environment variables.

No variables set: the embedded development mode (SQLite, local-memory cache, Celery tasks run
eagerly in-process, DEBUG on). DATABASE_URL / REDIS_URL switch to the services mode.
"""

import sys
from datetime import timedelta
from pathlib import Path

import environ
from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

from core.redis_config import (
    DEFAULT_MASTER,
    parse_sentinels,
    redis_cache,
    sentinel_broker_options,
    sentinel_broker_url,
    sentinel_cache_location,
    sentinel_problems,
)

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

# --- Core ------------------------------------------------------------------------------------
DEBUG = env.bool("DEBUG", default=True)
_secret_key = env.str("SECRET_KEY", default="")
if not _secret_key:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off (e.g. SECRET_KEY=$(openssl rand -hex 32))."
        )
    _secret_key = "insecure-development-key-do-not-use-in-production"  # noqa: S105
SECRET_KEY = _secret_key
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

DEVELOPMENT_MODE_WARNING = (
    "\n"
    "  ******************************************************************\n"
    "  *  shorturl is running in DEVELOPMENT MODE (DEBUG on).            *\n"
    "  *  Never expose this to the internet: set DEBUG=0 and SECRET_KEY.  *\n"
    "  ******************************************************************\n"
)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "core",
    # Before rest_framework.authtoken: its drf_create_token command is accounts' (hashed keys).
    "accounts",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "links",
    "analytics",
    "webhooks",
    "workspaces",
    "audit",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Shlink's CORS on every /rest/ answer (its outages' 503 too, made inside it); preflights
    # answered before sessions and authentication.
    "compat.shlink.cors.ShlinkCorsMiddleware",
    "core.outages.DatabaseUnavailableMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Which way a change came in (site, API, compat API, admin), for its audit entry.
    "audit.channels.ChannelMiddleware",
    # After the user is known: their time zone for every time a page shows or a form reads.
    "accounts.middleware.TimeZoneMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # DEBUG only: the product's 404 page instead of Django's technical one (core.not_found).
    "core.not_found.FriendlyNotFoundMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: turns a locked-out sign-in into its page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "shorturl_project.urls"
WSGI_APPLICATION = "shorturl_project.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.tz",
                "workspaces.context_processors.workspaces",
            ],
        },
    },
]

# --- Database ----------------------------------------------------------------------------------
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.mysql":
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "charset": "utf8mb4",
            "init_command": "SET sql_mode='STRICT_TRANS_TABLES', innodb_strict_mode=1",
            "isolation_level": "read committed",
        }
    )
    DATABASES["default"]["TEST"] = {"CHARSET": "utf8mb4", "COLLATION": "utf8mb4_unicode_ci"}
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
    # A kept connection is pinged before a request's first query: after a database restart each
    # web thread's old connection answered one request with a 500 (e2e/test_faults.py). The
    # redirect's cache hits never query, so they never pay for the ping.
    DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
elif DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several processes write to one file (make serve). WAL lets readers and the writer overlap;
    # IMMEDIATE takes the write lock when a transaction starts, so two transactions never both
    # read and then fail to upgrade ("database is locked" at once); the timeout makes a writer
    # wait its turn instead of failing. synchronous=NORMAL is safe with WAL (a power cut may
    # lose the last commits, never corrupt the file).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": env.int("SQLITE_BUSY_TIMEOUT", default=30),
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache and Redis ---------------------------------------------------------------------------
# Redis is one server or cluster node (REDIS_URL), or a master that Redis Sentinel watches and
# replaces (REDIS_SENTINELS="h1:26379,h2:26379,h3:26379", REDIS_SENTINEL_MASTER): then REDIS_URL
# gives only the password and database number (redis://:secret@/0), and every Redis client here
# asks the sentinels where the master is, again after a failover (core/redis_config.py; the
# core.E001 check refuses entries it cannot read, and REDIS_CLUSTER with it).
REDIS_URL = env.str("REDIS_URL", default="")
REDIS_SENTINELS = env.str("REDIS_SENTINELS", default="").strip()
# Only the entries that read as host:port; core.E001 names the others at start-up.
_sentinels = parse_sentinels(REDIS_SENTINELS)[0]
REDIS_SENTINEL_MASTER = env.str("REDIS_SENTINEL_MASTER", default=DEFAULT_MASTER)
REDIS_SENTINEL_PASSWORD = env.str("REDIS_SENTINEL_PASSWORD", default="")
REDIS_CLUSTER = env.bool("REDIS_CLUSTER", default=False)
if REDIS_SENTINELS and not _sentinels:
    # Nothing to build a cache or broker from, and falling back to REDIS_URL's host or to eager
    # tasks would hide it: refuse here, in every process (the worker runs no system checks).
    raise ImproperlyConfigured(
        " ".join(sentinel_problems(sentinels=REDIS_SENTINELS, cluster=REDIS_CLUSTER))
    )
if REDIS_SENTINELS:
    # Seen by everything that asks whether Redis is in use (services mode), and it is the cache's
    # LOCATION: redis://<master name>/<db>.
    REDIS_URL = sentinel_cache_location(REDIS_SENTINEL_MASTER, REDIS_URL)
if REDIS_URL:
    CACHES = {
        "default": redis_cache(
            location=REDIS_URL,
            key_prefix=env.str("CACHE_KEY_PREFIX", default="su"),
            sentinels=_sentinels,
            sentinel_password=REDIS_SENTINEL_PASSWORD,
            cluster=REDIS_CLUSTER,
        )
    }
    DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# A batch of spooled visits leaves the node's disk only once this many replicas hold it (Redis
# WAIT, up to REDIS_WAIT_MS): a master killed right after the push loses no visit the node has
# let go of. 1 by default with Sentinel (where a master is expected to die), else 0 (no wait).
REDIS_WAIT_REPLICAS = env.int("REDIS_WAIT_REPLICAS", default=1 if REDIS_SENTINELS else 0)
REDIS_WAIT_MS = env.int("REDIS_WAIT_MS", default=1000)

# --- Node-local state: what the processes of one server share --------------------------------
# The link-cache generation table, the visit spool and the background runner's lock live here:
# beside the SQLite file by default (so two installs never share them), else BASE_DIR/var. Keep
# it on a local disk; each server (node) needs its own.
_sqlite_file = (
    str(DATABASES["default"].get("NAME") or "")
    if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
    else ""
)
NODE_STATE_DIR = env.str(
    "NODE_STATE_DIR",
    default=(
        f"{_sqlite_file}-state"
        if _sqlite_file and not _sqlite_file.startswith((":memory:", "file:"))
        else str(BASE_DIR / "var")
    ),
)
# Services mode: answer cached redirects from the worker's own memory and append their visits to
# the node's spool, which the node's runner forwards to Redis every NODE_SYNC_SECONDS; link
# changes reach every node through a Redis stream read as often. A worker whose node has not
# heard from Redis for NODE_SYNC_MAX_LAG seconds asks Redis on every redirect instead, so an
# edit or revoke is seen everywhere within that bound. Off: one Redis round trip per redirect.
SHORTURL_LOCAL_REDIRECTS = env.bool("SHORTURL_LOCAL_REDIRECTS", default=True)
NODE_SYNC_SECONDS = env.float("NODE_SYNC_SECONDS", default=0.2)
NODE_SYNC_MAX_LAG = env.float("NODE_SYNC_MAX_LAG", default=0.8)
# Half a second, as ANALYTICS_FLUSH_SECONDS: an open stats page (one poll a second) shows a click
# within 2 s (docs/analytics.md, "Live stats"); an idle run reads an empty spool (~0.1 ms).
EMBEDDED_FLUSH_SECONDS = env.float("EMBEDDED_FLUSH_SECONDS", default=0.5)
EMBEDDED_AGGREGATE_SECONDS = env.float("EMBEDDED_AGGREGATE_SECONDS", default=5.0)
SHORTURL_POOL_CHECK_SECONDS = env.float("SHORTURL_POOL_CHECK_SECONDS", default=60.0)
# How often due webhook deliveries (new ones and retries) are looked for: the embedded runner's
# job, and beat's sweep in services mode (where a new delivery's own task usually sends it first).
WEBHOOK_CHECK_SECONDS = env.float("WEBHOOK_CHECK_SECONDS", default=2.0)
# The whole of one delivery attempt (name lookup, connect, TLS, sending, the answer): a receiver
# still answering then is cut off and the attempt failed (webhooks/sending.py).
WEBHOOK_ATTEMPT_SECONDS = env.float("WEBHOOK_ATTEMPT_SECONDS", default=10.0)
# A webhook whose receiver fails this many attempts in a row (backed off ever longer between
# them, about a day in all) is turned off, with the reason shown to its workspace's writers.
WEBHOOK_DISABLE_AFTER_FAILURES = env.int("WEBHOOK_DISABLE_AFTER_FAILURES", default=15)

# Destination health (links/services/health.py, docs/link-health.md): the checker's tick (the
# periodic job), how long a link waits between checks while fine and while broken, how many
# failed checks in a row make a destination broken, at most one request per host every
# LINK_CHECK_HOST_SECONDS, at most LINK_CHECK_BATCH links and LINK_CHECK_TICK_SECONDS per tick,
# LINK_CHECK_FETCH_SECONDS for one fetch (redirects included), LINK_CHECK_HISTORY checks kept.
LINK_CHECK_SECONDS = env.float("LINK_CHECK_SECONDS", default=60.0)
LINK_CHECK_OK_SECONDS = env.float("LINK_CHECK_OK_SECONDS", default=15 * 60.0)
LINK_CHECK_BROKEN_SECONDS = env.float("LINK_CHECK_BROKEN_SECONDS", default=60.0)
LINK_CHECK_FAILURES = env.int("LINK_CHECK_FAILURES", default=2)
LINK_CHECK_HOST_SECONDS = env.float("LINK_CHECK_HOST_SECONDS", default=2.0)
LINK_CHECK_BATCH = env.int("LINK_CHECK_BATCH", default=100)
LINK_CHECK_TICK_SECONDS = env.float("LINK_CHECK_TICK_SECONDS", default=30.0)
LINK_CHECK_FETCH_SECONDS = env.float("LINK_CHECK_FETCH_SECONDS", default=10.0)
LINK_CHECK_HISTORY = env.int("LINK_CHECK_HISTORY", default=50)
# Test-only: the checker may fetch loopback and private addresses (links/outbound.py). Any link
# owner picks destinations, so on, anyone can make the server fetch internal services (SSRF).
# Separate from SHORTURL_WEBHOOK_ALLOW_PRIVATE, which an operator may turn on for a LAN receiver.
LINK_CHECK_ALLOW_PRIVATE = env.bool("LINK_CHECK_ALLOW_PRIVATE", default=False)
# A page about the checker for the owners of the sites it fetches, named in its User-Agent.
LINK_CHECK_ABOUT_URL = env.str("LINK_CHECK_ABOUT_URL", default="")

# --- Celery ------------------------------------------------------------------------------------
CELERY_BROKER_URL = env.str(
    "CELERY_BROKER_URL",
    default=(sentinel_broker_url(_sentinels, REDIS_URL) if REDIS_SENTINELS else REDIS_URL)
    or "memory://",
)
if CELERY_BROKER_URL.startswith("sentinel://"):
    # kombu's Sentinel transport asks the sentinels for this master, and again on reconnecting.
    CELERY_BROKER_TRANSPORT_OPTIONS = sentinel_broker_options(
        master=REDIS_SENTINEL_MASTER, sentinel_password=REDIS_SENTINEL_PASSWORD
    )
CELERY_TASK_ALWAYS_EAGER = env.bool(
    "CELERY_TASK_ALWAYS_EAGER", default=CELERY_BROKER_URL.startswith("memory://")
)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=300)
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=240)
# Tasks are acknowledged when they start, not when they end. Every task here is periodic and
# keeps its own state where a crash cannot lose it (a flush's batch waits in its lane's Redis
# list), so a late ack bought nothing; and with a task unacknowledged when the broker went away,
# kombu's Redis transport died restoring it ("Unrecoverable error: AttributeError ... hostname"),
# so the worker never came back after a Redis restart (e2e/test_faults.py).
CELERY_TASK_ACKS_LATE = False
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker that, this many seconds in a row, holds no task while its queues hold messages ends
# itself for its supervisor to start a fresh one (shorturl_project/worker_watchdog.py: kombu has
# left workers alive and consuming nothing after a broker restart). 0: never.
WORKER_STALL_SECONDS = env.float("WORKER_STALL_SECONDS", default=15.0)
CELERY_TIMEZONE = "UTC"
# How often imports whose process died are ended (beat in services mode, the node runner in
# the embedded mode); one is taken for dead when its row has not moved for 10 minutes.
IMPORT_SWEEP_SECONDS = env.float("IMPORT_SWEEP_SECONDS", default=60.0)
# Webhook deliveries wait on other people's servers: a queue of their own, consumed by a worker
# of its own (`make webhook-worker`, docker-compose's webhook-worker), so that a slow receiver
# never holds the worker that stores visits (`make worker` consumes only the default queue).
# The link checker waits on other people's servers too (links/services/health.py): the same lane.
CELERY_TASK_ROUTES = {
    "webhooks.tasks.*": {"queue": "webhooks"},
    "links.tasks.check_link_health_task": {"queue": "webhooks"},
}
# How often beat has visits stored and hours rolled up in services mode (the embedded runner:
# EMBEDDED_FLUSH_SECONDS, EMBEDDED_AGGREGATE_SECONDS). Beat's schedule is not a setting: it is
# built from the one list of periodic jobs (shorturl_project.jobs) by shorturl_project.celery.
# The flush every 0.5 s (was 2 s): with the node's forward (NODE_SYNC_SECONDS) and a stats page's
# poll a second, a click shows on an open page within 2 s; an idle run costs the worker ~6 ms of
# CPU, ~1 % of a core at this rate (docs/performance.md, "Live stats").
ANALYTICS_FLUSH_SECONDS = env.float("ANALYTICS_FLUSH_SECONDS", default=0.5)
ANALYTICS_AGGREGATE_SECONDS = env.float("ANALYTICS_AGGREGATE_SECONDS", default=10.0)
# Days raw visits (VisitRecord: IP, user agent, referrer, …) are kept; a workspace's owners may
# set their own. Unset: kept for good. Totals, charts and breakdowns are kept whatever this says
# (docs/privacy.md). The retention job runs this often (both modes, shorturl_project.jobs).
_raw_days = env.str("ANALYTICS_RAW_RETENTION_DAYS", default="").strip()
ANALYTICS_RAW_RETENTION_DAYS = int(_raw_days) if _raw_days else None
ANALYTICS_RETENTION_SECONDS = env.float("ANALYTICS_RETENTION_SECONDS", default=3600.0)

# --- Auth --------------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Password guessing (django-axes): failures counted per username + client IP in the database
# (shared by every process and node, both modes); past LOGIN_FAILURE_LIMIT the sign-in form and
# the admin's answer 429 for LOGIN_LOCKOUT_MINUTES, even to the right password, and each try
# meanwhile starts the wait again. Staff lift a lock in the admin (Access attempts) or with
# `manage.py axes_reset_username NAME`. Wrong old passwords on the password-change pages count
# too, and pause those pages per user from every address (accounts.services.password_check;
# lifted in the admin's "Password check pauses").
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # ModelBackend's passwords, refused while LOCAL_PASSWORDS is off; then the provider's sign-in
    # (SSO_ISSUER, below), which answers nothing while single sign-on is off.
    "accounts.oidc.PasswordBackend",
    "accounts.oidc.ProviderBackend",
]
LOGIN_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5)
LOGIN_LOCKOUT_MINUTES = env.int("LOGIN_LOCKOUT_MINUTES", default=15)
AXES_FAILURE_LIMIT = LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(minutes=LOGIN_LOCKOUT_MINUTES)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "core.login_attempts.client_address"
AXES_USERNAME_CALLABLE = "core.login_attempts.attempted_username"
AXES_LOCKOUT_CALLABLE = "core.login_attempts.locked_out_response"
AXES_WHITELIST_CALLABLE = "core.login_attempts.is_provider_answer"
# Axes keeps a failed try's form fields; these are masked like "password" (the password-change
# form's old and new passwords; YOURLS's `signature`, an API key).
AXES_SENSITIVE_PARAMETERS = [
    "username",
    "ip_address",
    "old_password",
    "new_password1",
    "new_password2",
    "signature",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# --- Single sign-on (OpenID Connect, docs/sso.md) -----------------------------------------------
# On when SSO_ISSUER is set: the sign-in page and the admin's offer "Sign in with SSO_NAME".
# The provider's endpoints come from its discovery document (SSO_ISSUER +
# /.well-known/openid-configuration), read at the first sign-in and kept for an hour. People are
# matched by the provider's subject, else linked or created by their provider-verified e-mail
# (accounts.sso holds the rules).
SSO_ISSUER = env.str("SSO_ISSUER", default="").rstrip("/")
SSO_NAME = env.str("SSO_NAME", default="single sign-on")
SSO_CLIENT_ID = env.str("SSO_CLIENT_ID", default="")
SSO_CLIENT_SECRET = env.str("SSO_CLIENT_SECRET", default="")
# E-mail domains allowed to sign in (example.com, lower case); empty: any the provider vouches for.
SSO_ALLOWED_DOMAINS = [
    domain.strip().lower().lstrip("@") for domain in env.list("SSO_ALLOWED_DOMAINS", default=[])
]
SSO_CREATE_USERS = env.bool("SSO_CREATE_USERS", default=True)
# Where people who sign in through the provider are made members (a workspace slug), as what.
SSO_DEFAULT_WORKSPACE = env.str("SSO_DEFAULT_WORKSPACE", default="")
SSO_DEFAULT_ROLE = env.str("SSO_DEFAULT_ROLE", default="viewer")
# Off: no password is accepted anywhere (sign-in page, admin, YOURLS' username/password); people
# sign in through the provider and programs use API keys. Needs SSO_ISSUER (check accounts.E002).
LOCAL_PASSWORDS = env.bool("LOCAL_PASSWORDS", default=True)
# mozilla-django-oidc's own settings (the client and the endpoints it is given per sign-in by
# accounts.oidc, from ours). Each call to the provider, discovery's too, waits at most 5 s to
# connect and 10 s for each read; PKCE and a nonce on every sign-in; RS256 unless told.
OIDC_RP_SIGN_ALGO = env.str("SSO_SIGN_ALGO", default="RS256")
OIDC_RP_SCOPES = "openid email profile"
OIDC_USE_PKCE = True
OIDC_TIMEOUT = (5, 10)
OIDC_AUTHENTICATION_CALLBACK_URL = "sso_callback"

# --- I18N / time -------------------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

# --- Static files ------------------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
# `make serve` collects static files before it starts. A server started without that still
# renders its pages and their assets (plain URLs found through the finders, a warning at start)
# instead of answering 500.
WHITENOISE_USE_FINDERS = True
# Uploaded files (QR logos, links.models.QrDesign) in the default storage: a folder here (beside
# the SQLite file in the embedded mode); several web nodes need a shared one (a shared disk
# mounted at MEDIA_ROOT, or another STORAGES["default"] backend). Never served as they are.
MEDIA_ROOT = env.path(
    "MEDIA_ROOT",
    default=(
        f"{_sqlite_file}-media"
        if _sqlite_file and not _sqlite_file.startswith((":memory:", "file:"))
        else BASE_DIR / "var" / "media"
    ),
)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "core.storage.ManifestStaticFilesStorage"
        )
    },
}

# --- Security (production) ---------------------------------------------------------------------
# Off by default so that the embedded set-up answers on plain http://localhost; behind TLS set the
# values docs/operations.md lists ("Production settings"), with which `check --deploy` is clean.
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
# Load balancers probe /healthz over plain HTTP inside the network.
SECURE_REDIRECT_EXEMPT = [r"^healthz(/node)?$"]
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
NUM_PROXIES = env.int("NUM_PROXIES", default=0)
if NUM_PROXIES > 0:
    # Only a proxy of ours may say the request came over HTTPS: with none in front, anyone
    # could send the header and be taken for a secure request.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
if not DEBUG:
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy (django-csp): scripts, styles, images and fonts from this site only, no
# inline scripts. Inline style attributes stay allowed (style-src-attr): templates size bars and
# cards with them, and they cannot run code. data: images are Swagger UI's icons.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "style-src-attr": [UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}
# Checks an operator has decided against (e.g. security.W005 without HSTS on subdomains).
SILENCED_SYSTEM_CHECKS = env.list("SILENCED_SYSTEM_CHECKS", default=[])
# The largest request body read into memory; bigger API bodies answer 413. The default (2.5 MiB,
# Django's) admits the largest bulk call: 1,000 items with every field at its longest.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=2_621_440)

# --- REST framework ----------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Keys people make on /accounts/api-keys/ (su_…) and drf_create_token's tokens, all kept
        # as hashes; DRF's TokenAuthentication is not used (its table kept keys in plain text).
        "accounts.authentication.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "core.api.pagination.LinkPagination",
    "DEFAULT_THROTTLE_RATES": {
        "api_write": env.str("API_WRITE_RATE", default="600/min"),
        "api_read": env.str("API_READ_RATE", default="3000/min"),
        "anon": env.str("API_ANON_RATE", default="60/min"),
    },
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
# Counts each API key's requests against its own limit (ApiKey.rate_limit, else its workspace's
# api_rate_limit): in Redis in services mode, in the database otherwise (docs/api.md).
API_KEY_LIMITER = "accounts.key_limits.take"
SPECTACULAR_SETTINGS = {
    "TITLE": "shorturl API",
    "DESCRIPTION": (
        "Shorten, restore, update and revoke short links; read their click stats; manage webhooks."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # No badge fetched from the public validator (the page works offline, and the CSP says so).
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # A webhook delivery's status is not a link's: each keeps its own name in the schema.
    "ENUM_NAME_OVERRIDES": {
        "StatusEnum": "links.models.LinkStatus",
        "WebhookDeliveryStatusEnum": "webhooks.models.DeliveryStatus",
        "QrErrorLevelEnum": "links.models.QrErrorLevel",
        "PrivacyEnum": "workspaces.models.Privacy",
    },
}

# --- shorturl ----------------------------------------------------------------------------------
SHORT_URL_BASE = env.str("SHORT_URL_BASE", default="")
SHORTURL_CODE_STRATEGY = env.str("SHORTURL_CODE_STRATEGY", default="pool")
SHORTURL_CODE_LENGTH = env.int("SHORTURL_CODE_LENGTH", default=6)
# A permutation of the 62 alphanumerics; changing it changes every sequence code, so keep it secret.
SHORTURL_ALPHABET = env.str(
    "SHORTURL_ALPHABET", default="0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)
SHORTURL_SEQUENCE_KEY = env.str("SHORTURL_SEQUENCE_KEY", default=SECRET_KEY)
SHORTURL_SEQUENCE_BLOCK = env.int("SHORTURL_SEQUENCE_BLOCK", default=100)
SHORTURL_HASH_SALT = env.str("SHORTURL_HASH_SALT", default="shorturl")
SHORTURL_HASH_MAX_RETRIES = env.int("SHORTURL_HASH_MAX_RETRIES", default=8)
SHORTURL_POOL_MIN = env.int("SHORTURL_POOL_MIN", default=1000)
SHORTURL_POOL_BATCH = env.int("SHORTURL_POOL_BATCH", default=5000)
SHORTURL_MAX_URL_LENGTH = env.int("SHORTURL_MAX_URL_LENGTH", default=2048)
SHORTURL_BLOCKED_DOMAINS = env.list("SHORTURL_BLOCKED_DOMAINS", default=[])
SHORTURL_ALLOWED_DOMAINS = env.list("SHORTURL_ALLOWED_DOMAINS", default=[])
SHORTURL_CACHE_TTL = env.int("SHORTURL_CACHE_TTL", default=24 * 3600)
SHORTURL_NEGATIVE_CACHE_TTL = env.int("SHORTURL_NEGATIVE_CACHE_TTL", default=60)
# 404s one client (IP, IPv6 /64) is answered per worker process before it gets 429 instead, per
# s/min/hour/day like the API rates; "" turns it off (serving/not_found_limit.py).
SHORTURL_NOT_FOUND_RATE = env.str("SHORTURL_NOT_FOUND_RATE", default="300/min")
# Password tries on password-protected links one client (IP, IPv6 /64) may make per window
# before it is answered 429 without its password being checked (serving/unlock.py).
SHORTURL_UNLOCK_TRIES = env.int("SHORTURL_UNLOCK_TRIES", default=10)
SHORTURL_UNLOCK_WINDOW_SECONDS = env.int("SHORTURL_UNLOCK_WINDOW_SECONDS", default=600)
# The largest file the import page takes (about 50,000 links of CSV per 5 MiB); the command
# reads files of any size.
SHORTURL_IMPORT_MAX_BYTES = env.int("SHORTURL_IMPORT_MAX_BYTES", default=5 * 1024 * 1024)
# The most links one upload may hold: a file with more fails before anything is imported (a 5 MB
# dump of `(1),(1),…` is 1.3 million rows). Rows are read one batch at a time, so this bounds
# the run's time and what it remembers of the file (the codes and URLs it has seen).
SHORTURL_IMPORT_MAX_ROWS = env.int("SHORTURL_IMPORT_MAX_ROWS", default=100_000)
# How many rows of each outcome (imported, new code, skipped) an upload's report lists; every
# row is counted. Bounds the stored report (about 1 KB a row at most, ~3 MB).
SHORTURL_IMPORT_REPORT_ROWS = env.int("SHORTURL_IMPORT_REPORT_ROWS", default=1000)

# Request bodies are read whole by the server's event loop before a thread runs the app
# (shorturl_project/bodies.py; docs/operations.md, "Production topology"), so a client sending
# slowly holds no thread. The cap admits the largest body any endpoint takes (an import file or
# a bulk call) plus 1 MiB for the multipart envelope: past it, 413 before a byte is read. A
# body must arrive within REQUEST_BODY_TIMEOUT seconds plus one second per
# REQUEST_BODY_MIN_RATE bytes received (408 otherwise). REQUEST_BODY_BUFFER_BYTES bounds what
# the bodies being read or waiting for a thread hold together in one process (503 past it).
REQUEST_BODY_MAX_BYTES = env.int(
    "REQUEST_BODY_MAX_BYTES",
    default=max(DATA_UPLOAD_MAX_MEMORY_SIZE, SHORTURL_IMPORT_MAX_BYTES) + 1024 * 1024,
)
REQUEST_BODY_TIMEOUT = env.float("REQUEST_BODY_TIMEOUT", default=10.0)
REQUEST_BODY_MIN_RATE = env.int("REQUEST_BODY_MIN_RATE", default=16 * 1024)
REQUEST_BODY_BUFFER_BYTES = env.int("REQUEST_BODY_BUFFER_BYTES", default=64 * 1024 * 1024)

# Webhooks may be sent to loopback and private addresses (webhooks/targets.py): off, a webhook
# to 127.0.0.1, 10.x, 169.254.x or a name resolving to one is refused (SSRF). For a receiver on
# this machine or network that you trust; the tests turn it on to reach their own receiver.
# Webhooks only: the link health checker never follows it (LINK_CHECK_ALLOW_PRIVATE).
SHORTURL_WEBHOOK_ALLOW_PRIVATE = env.bool("SHORTURL_WEBHOOK_ALLOW_PRIVATE", default=False)

# Workspace invitations: how long one waits for its invitee, and how many may wait in one
# workspace at once (so an owner cannot fill everyone's dashboard with offers).
WORKSPACE_INVITATION_DAYS = env.int("WORKSPACE_INVITATION_DAYS", default=14)
WORKSPACE_INVITATIONS_OPEN_MAX = env.int("WORKSPACE_INVITATIONS_OPEN_MAX", default=100)
GEOIP_CITY_DB = env.str("GEOIP_CITY_DB", default="")
GEOIP_ASN_DB = env.str("GEOIP_ASN_DB", default="")
GEOIP_LANGUAGE = env.str("GEOIP_LANGUAGE", default="en")
ANONYMIZE_IP = env.bool("ANONYMIZE_IP", default=False)
# What a stored visit keeps of its visitor (docs/privacy.md): "full" (the address and a plain
# visitor hash), "truncated" (the /24 or /48 network; places looked up from the full address
# first) or "none" (no address). A workspace's owners may choose another for theirs. In the last
# two the visitor id is keyed with a secret that is replaced every ANALYTICS_VISITOR_KEY_HOURS
# and then deleted, so unique visitors are exact within one such window.
ANALYTICS_PRIVACY = env.str("ANALYTICS_PRIVACY", default="full")
if ANALYTICS_PRIVACY not in ("full", "truncated", "none"):
    raise ImproperlyConfigured("ANALYTICS_PRIVACY is full, truncated or none.")
ANALYTICS_VISITOR_KEY_HOURS = env.float("ANALYTICS_VISITOR_KEY_HOURS", default=24.0)
# How often ended windows' secrets are deleted (a job in shorturl_project.jobs).
ANALYTICS_VISITOR_KEY_SWEEP_SECONDS = env.float("ANALYTICS_VISITOR_KEY_SWEEP_SECONDS", default=60.0)
# Sec-GPC: 1 is always honoured (the click counted, none of its details stored); DNT: 1 if on.
ANALYTICS_HONOUR_DNT = env.bool("ANALYTICS_HONOUR_DNT", default=False)
ANALYTICS_BATCH_SIZE = env.int("ANALYTICS_BATCH_SIZE", default=1000)
# Batches one flush stores side by side (threads of the worker process, see flush_pending).
ANALYTICS_FLUSH_LANES = env.int("ANALYTICS_FLUSH_LANES", default=2)
# Orphan visits (analytics.orphans): how often each web process writes its counts (0: never by
# itself, for tests), and how many distinct (path, referrer) rows it keeps between two writes.
ORPHAN_VISITS_FLUSH_SECONDS = env.float("ORPHAN_VISITS_FLUSH_SECONDS", default=10.0)
ORPHAN_VISITS_MAX_KEYS = env.int("ORPHAN_VISITS_MAX_KEYS", default=2000)
# The most entries one stats series lists (the stats API and pages, a tag's, Bitly's `units`):
# what a series costs follows its entries (analytics.ranges), and a span chosen past this is
# refused with a 400 naming it. 10,000 keeps 366 days of hours and 27 years of days; the
# largest allowed request measured ~2 s of CPU (docs/analytics.md, "Span limits").
STATS_MAX_BUCKETS = env.int("STATS_MAX_BUCKETS", default=10_000)

# --- Logging -----------------------------------------------------------------------------------
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # Failures and lockouts are warnings; every sign-in's bookkeeping line is not news.
        "axes": {"level": "WARNING"},
    },
}


def serves_requests(argv: list[str], run_main: str | None) -> bool:
    """Whether this process answers requests, the development banner's audience, so that
    `make run` prints it once: not a management command run before the server (migrate,
    ensure_demo_users, check), and of runserver's two processes only the one its autoreloader
    starts (RUN_MAIN="true"), or the only one with --noreload. Anything else that loads the
    settings (a WSGI/ASGI server, a worker) does."""
    command = argv[1] if len(argv) > 1 else ""
    if command == "runserver":
        return run_main == "true" or "--noreload" in argv
    program = Path(argv[0]).name if argv else ""
    return program not in {"manage.py", "django-admin", "__main__.py"}


if (
    DEBUG
    and "pytest" not in sys.modules
    and env.bool("SHOW_DEV_WARNING", default=True)
    and serves_requests(sys.argv, env.str("RUN_MAIN", default=None))
):
    print(DEVELOPMENT_MODE_WARNING, file=sys.stderr)
