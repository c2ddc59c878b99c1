"""Settings for the delivery service, all from the environment (contract "Running it").

Development defaults work on a machine with PostgreSQL and Redis on localhost.
With DEBUG=false every secret must be given explicitly; the service refuses to start otherwise.
"""

from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from delivery import secret_policy, versioning

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

DEBUG = env.bool("DEBUG", default=True)

# Development-only fallbacks: never used when DEBUG is false (checked below).
_DEV_SECRET_KEY = "dev-insecure-secret-key-do-not-use-in-production"
_DEV_PROVISIONING_SECRET = "dev-provisioning-secret"
_DEV_FIELD_ENCRYPTION_KEY = "AoUWDpBfIY2F-seBuhOrr3Mfj8b-FUHmU17_EY2C6mE="


def _secret(name: str, dev_default: str) -> str:
    """The secret `name`; with DEBUG on its development value when unset, with DEBUG off a
    strong value or no start at all (docs/operations.md "Configuration")."""
    value = env.str(name, default="")
    if DEBUG:
        return value or dev_default
    weakness = secret_policy.weakness(name, value, dev_default)
    if weakness:
        raise ImproperlyConfigured(
            f"{name} {weakness}; a strong one is required when DEBUG is false: "
            f"{secret_policy.how_to_generate(name)}"
        )
    return value


SECRET_KEY = _secret("SECRET_KEY", _DEV_SECRET_KEY)
PROVISIONING_SECRET = _secret("PROVISIONING_SECRET", _DEV_PROVISIONING_SECRET)
FIELD_ENCRYPTION_KEY = _secret("FIELD_ENCRYPTION_KEY", _DEV_FIELD_ENCRYPTION_KEY)

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["*"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

SERVICE_NAME = env.str("SERVICE_NAME", default="delivery")

INSTALLED_APPS = [
    "delivery.apps.DeliveryAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "tenants",
    "provisioning",
    "zones",
    "webhooks",
    "integrations",
    "slots",
    "dispatch",
    "couriers",
    "tracking",
    "demo",
]

MIDDLEWARE = [
    # Before everything, so every answer carries API-Version, error answers of any layer too.
    "delivery.versioning.ApiVersionMiddleware",
    # Outermost but one, so the latency it observes covers every other middleware.
    "delivery.metrics.MetricsMiddleware",
    "delivery.middleware.RequestIdMiddleware",
    # Inside the request id (its line carries it), outside the rest (it logs the final status).
    "delivery.access_log.AccessLogMiddleware",
    "delivery.middleware.RateLimitHeadersMiddleware",
    # Before the body-size check, which then sees a chunked body's length too.
    "delivery.chunked.ChunkedBodyMiddleware",
    "delivery.middleware.ApiErrorMiddleware",
    # First after the host and body-size checks: a refused request costs no more than this.
    "tenants.in_flight_limit.InFlightLimitMiddleware",
    "delivery.middleware.UnstorableTextMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Static files (admin, API docs) from the service itself, with DEBUG off too (gunicorn).
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "service.urls"
WSGI_APPLICATION = "delivery.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # delivery/ is no app: its templates (the self-contained ReDoc page) are listed here.
        "DIRS": [BASE_DIR / "delivery" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": env.db("DATABASE_URL", default="postgres://postgres@127.0.0.1:5432/delivery")
}
# Persistent connections: a new connection per request was measured 5x slower (docs/performance.md).
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DATABASES["default"].setdefault("OPTIONS", {})
# A request must fail rather than hang when PostgreSQL is away.
DATABASES["default"]["OPTIONS"].setdefault("connect_timeout", 5)
# Parameters bound by the server let psycopg prepare a statement once a connection ran it 5 times:
# PostgreSQL then parses and plans it once per connection (docs/performance.md). Off behind a
# pooler that cannot keep prepared statements (PgBouncer in transaction mode, by default).
DATABASE_PREPARED_STATEMENTS = env.bool("DATABASE_PREPARED_STATEMENTS", default=True)
if DATABASE_PREPARED_STATEMENTS:
    DATABASES["default"]["OPTIONS"].setdefault("server_side_binding", True)
    DATABASES["default"]["OPTIONS"].setdefault("prepare_threshold", 5)
# A pool of this many connections per process instead of one kept per thread (for the web
# workers, whose threads take turns: delivery/fairness.py; gunicorn.conf.py). 0: no pool.
DATABASE_POOL_MAX_SIZE = env.int("DATABASE_POOL_MAX_SIZE", default=0)
if DATABASE_POOL_MAX_SIZE:
    # A pooled connection goes back to the pool when the request ends (Django refuses both).
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"]["pool"] = {
        "min_size": 1,
        "max_size": DATABASE_POOL_MAX_SIZE,
        # Waiting longer for a connection than a request may take answers 503 instead.
        "timeout": env.int("DATABASE_POOL_TIMEOUT", default=10),
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.str("REDIS_URL", default="redis://127.0.0.1:6379/0")

CACHES = {
    "default": {
        "BACKEND": "delivery.cache.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": SERVICE_NAME,
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    }
}

AUTH_USER_MODEL = "tenants.User"
AUTH_PASSWORD_VALIDATORS = [
    {
        "NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator",
        "OPTIONS": {"user_attributes": ("email", "name")},
    },
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 10},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# Filled by `manage.py collectstatic` (scripts/run.sh, the Dockerfile); WhiteNoise serves it.
STATIC_ROOT = env.path("STATIC_ROOT", default=str(BASE_DIR / "var" / "static"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # gzip copies made at collectstatic; no manifest, so nothing breaks without it.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
    # Large gazetteer CSV uploads wait here for their import task (docs/operations.md
    # "Configuration"); never served. Web and worker must share it (docker-compose.yml mounts one
    # volume in both).
    "gazetteer_imports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {
            "location": env.str(
                "GAZETTEER_IMPORT_DIR", default=str(BASE_DIR / "var" / "gazetteer-imports")
            ),
            "base_url": None,
            "file_permissions_mode": 0o600,
            "directory_permissions_mode": 0o700,
        },
    },
}
# Couriers' photos and signatures (docs/contract.md "Couriers"): never served from a public
# path, only through the service's signed, expiring URLs. A directory outside the static and
# media roots by default (`PROOFS_DIR`; web and worker must share it); `PROOFS_STORAGE=s3` keeps
# them in a private S3-compatible bucket instead (django-storages with boto3, which reads its
# credentials from the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).
if env.str("PROOFS_STORAGE", default="filesystem") == "s3":
    STORAGES["proofs"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env.str("PROOFS_S3_BUCKET"),
            "endpoint_url": env.str("PROOFS_S3_ENDPOINT_URL", default="") or None,
            "location": env.str("PROOFS_S3_PREFIX", default="proofs"),
            "default_acl": "private",
            "querystring_auth": True,
            "file_overwrite": False,
        },
    }
else:
    STORAGES["proofs"] = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {
            "location": env.str("PROOFS_DIR", default=str(BASE_DIR / "var" / "proofs")),
            "base_url": None,
            "file_permissions_mode": 0o600,
            "directory_permissions_mode": 0o700,
        },
    }

# contract "Errors": a body over 1 MiB answers 413.
MAX_REQUEST_BODY_BYTES = 1024 * 1024
#: the paths that take a file upload, and their larger limit (docs/contract.md "Couriers": a
#: photo of at most 5 MB, in a multipart body)
UPLOAD_BODY_PATHS = ("/api/courier/photos",)
MAX_UPLOAD_BODY_BYTES = 6 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BODY_BYTES

# contract "Conventions": every path works with and without a trailing slash, with no redirect.
APPEND_SLASH = False

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_PARSER_CLASSES": ["delivery.parsers.SafeJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "delivery.schema.AutoSchema",
    "EXCEPTION_HANDLER": "delivery.exception_handler.api_exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "UNAUTHENTICATED_TOKEN": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Delivery orchestration service",
    "DESCRIPTION": "Multi-tenant last-mile delivery platform. Reference: docs/contract.md.",
    # The release (docs/changelog.md); its one source is pyproject.toml.
    "VERSION": versioning.release(),
    "SERVE_INCLUDE_SCHEMA": False,
    "PREPROCESSING_HOOKS": ["delivery.routing.drop_slashed_duplicates"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "delivery.versioning.declare_api_version_header",
    ],
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI and ReDoc from the pinned drf-spectacular-sidecar package, served by the
    # service itself: no CDN, nothing unpinned runs in an admin's browser, works offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Email (contract "Provisioning"): SMTP in production, console in development.
globals().update(env.email_url("EMAIL_URL", default="consolemail://"))
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default=f"no-reply@{SERVICE_NAME}.local")
INVITE_URL_TEMPLATE = env.str(
    "INVITE_URL_TEMPLATE",
    default="http://localhost:8000/api/provisioning/invite/{token}",
)

# Rate limits (contract "Rate limits"). Counters live in the Django cache (Redis).
RATELIMIT_ENABLE = env.bool("RATELIMIT_ENABLE", default=True)
RATELIMIT_USE_CACHE = "default"
# Redis down must not take the API down: limits fail open (with an error log).
RATELIMIT_FAIL_OPEN = True
API_RATE_LIMIT = env.str("API_RATE_LIMIT", default="600/m")
# Management API (bearer tokens): per user.
MANAGEMENT_RATE_LIMIT = env.str("MANAGEMENT_RATE_LIMIT", default="600/m")
# Requests in flight per organization and kind of caller (API keys, management), across every
# web process (delivery/inflight.py). The default is half the web tier's threads (gunicorn.conf.py
# reads the same two variables: 64 as shipped), so one tenant flooding through one kind leaves the
# other half to everyone else, while a burst of 40 concurrent requests from one tenant (our own
# concurrency tests) passes; never below 16. Several instances share the count: set it to half of
# the whole tier's threads then. 0: no limit.
WEB_CONCURRENCY = env.int("WEB_CONCURRENCY", default=4)
WEB_THREADS = env.int("WEB_THREADS", default=32)
IN_FLIGHT_LIMIT = env.int("IN_FLIGHT_LIMIT", default=max(16, WEB_CONCURRENCY * WEB_THREADS // 2))
# Fair turns (delivery/fairness.py): requests running at once per process, and of one caller
# (organization and kind) per process; the others wait their turn. 0: no turns at all.
FAIR_RUNNING_PER_WORKER = env.int("FAIR_RUNNING_PER_WORKER", default=2)
FAIR_RUNNING_PER_CALLER = env.int("FAIR_RUNNING_PER_CALLER", default=1)
# Requests of one caller running at once across every worker process of this instance, while
# another caller has requests in flight (locks on files in FAIR_TURNS_DIR, which the instance's
# workers, and only they, must share). 0: off. Without it a flooding tenant runs one request in
# every worker beside the others' (docs/faults.md "Noisy neighbours": a quiet tenant's median
# 2.9x and 4.5x alone under a flood, against 1.4-2.3x and 1.4-1.7x with it; no CPU cost alone).
FAIR_INSTANCE_RUNNING_PER_CALLER = env.int("FAIR_INSTANCE_RUNNING_PER_CALLER", default=1)
FAIR_TURNS_DIR = env.str("FAIR_TURNS_DIR", default=str(BASE_DIR / "var" / "turns"))
# A request that found no turn within this (gunicorn's timeout) answers 503.
FAIR_TURN_WAIT_SECONDS = env.int("GUNICORN_TIMEOUT", default=30)
# A place not given back (a worker killed mid-request) lapses after this: gunicorn's timeout.
IN_FLIGHT_EXPIRY_SECONDS = env.int("GUNICORN_TIMEOUT", default=30) + 5
#: the courier API, per driver (docs/contract.md "Couriers")
COURIER_RATE_LIMIT = env.str("COURIER_RATE_LIMIT", default="300/m")
INVITE_RATE_LIMIT = env.str("INVITE_RATE_LIMIT", default="60/h")
# Failed logins (POST /api/auth/token, the admin's login form; docs/contract.md "Failed logins"):
# counted per fixed window; an account and address pair, or an address, is locked out at its limit
# for a cool-off that doubles with each further failure; an account alone is only slowed down.
LOGIN_FAILURE_WINDOW_SECONDS = env.int("LOGIN_FAILURE_WINDOW_SECONDS", default=900)
LOGIN_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5)
LOGIN_FAILURE_LIMIT_PER_ADDRESS = env.int("LOGIN_FAILURE_LIMIT_PER_ADDRESS", default=30)
LOGIN_FAILURE_LIMIT_PER_ACCOUNT = env.int("LOGIN_FAILURE_LIMIT_PER_ACCOUNT", default=10)
LOGIN_LOCKOUT_SECONDS = env.int("LOGIN_LOCKOUT_SECONDS", default=60)
LOGIN_LOCKOUT_MAX_SECONDS = env.int("LOGIN_LOCKOUT_MAX_SECONDS", default=900)
LOGIN_SLOWDOWN_SECONDS = env.int("LOGIN_SLOWDOWN_SECONDS", default=2)
LOGIN_SLOWDOWN_MAX_SECONDS = env.int("LOGIN_SLOWDOWN_MAX_SECONDS", default=60)
# An address an account logged in from is exempt from that account's slow-down this long.
LOGIN_KNOWN_ADDRESS_SECONDS = 30 * 24 * 3600
# Public tracking (API and page share it), per client address: guessing tokens stays slow.
TRACKING_RATE_LIMIT = env.str("TRACKING_RATE_LIMIT", default="120/m")
#: proof files by their signed URLs (docs/contract.md "Couriers"), per client address
PROOF_FILE_RATE_LIMIT = env.str("PROOF_FILE_RATE_LIMIT", default="300/m")
# Where order answers' trackingUrl points (`<base>/track/<token>`); empty: the request's own
# scheme and host (docs/contract.md "Orders").
TRACKING_BASE_URL = env.str("TRACKING_BASE_URL", default="")
PROVISIONING_RATE_LIMITS = {
    "organizations.list": "120/h",
    "organizations.create": "30/h",
    "organizations.update": "60/h",
    "admins.add": "60/h",
    "admins.resend_invite": "30/h",
    "admins.reset_password": "30/h",
    "api_keys.list": "120/h",
    "api_keys.create": "60/h",
    "api_keys.rotate": "60/h",
    "api_keys.revoke": "60/h",
    "api_keys.update": "60/h",
}

# Webhooks (contract "Provisioning", "Webhooks").
WEBHOOK_ALLOW_PRIVATE_URLS = env.bool("WEBHOOK_ALLOW_PRIVATE_URLS", default=DEBUG)
WEBHOOK_RETRY_SCHEDULE = [
    int(s) for s in env.list("WEBHOOK_RETRY_SCHEDULE", default=["0", "60", "300", "1800", "7200"])
]
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", default=10.0)
# How often the beat sweeps due deliveries (retries, and messages lost while Redis was away).
WEBHOOK_SWEEP_INTERVAL_SECONDS = env.float("WEBHOOK_SWEEP_INTERVAL_SECONDS", default=5.0)
# Attempts on the wire at once per destination (a key's webhook URL), across all workers: a
# receiver that hangs holds at most this many worker threads. A worker applies at most its own
# threads less one (webhooks/queueing.py: in_flight_limit), so one always stays free for other
# destinations (8 threads in docker-compose and scripts/run.sh: 4; with 2 threads: 1).
WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = env.int("WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION", default=4)
# How long `test-webhook` (and the keys' admin action) waits for the worker's attempt before it
# answers `delivered: false` saying it timed out; the attempt goes on and is recorded.
WEBHOOK_TEST_WAIT_SECONDS = env.float("WEBHOOK_TEST_WAIT_SECONDS", default=2.0)

# Geocoding (contract "Geocoding and resolve-zone").
GEOCODER = env.str("GEOCODER", default="local")
NOMINATIM_URL = env.str("NOMINATIM_URL", default="http://localhost:8080")
# Dispatch plans (contract "Dispatch"): the solver stops after this many seconds (or earlier).
DISPATCH_SOLVER_TIME_LIMIT_SECONDS = env.float("DISPATCH_SOLVER_TIME_LIMIT_SECONDS", default=5.0)
# ... or after this many iterations, when set: a run that must give the same plan again (the
# dispatch benchmark) bounds the search by iterations, which do not move with the machine's load.
DISPATCH_SOLVER_MAX_ITERATIONS = env.int("DISPATCH_SOLVER_MAX_ITERATIONS", default=None)
# Travel times: `haversine` (straight line x detour factor at the policy's speed) or `osrm` (an
# OSRM-compatible /table/v1/driving server at OSRM_URL; straight lines when it fails).
ROUTING = env.str("ROUTING", default="haversine")
OSRM_URL = env.str("OSRM_URL", default="")
OSRM_TIMEOUT_SECONDS = env.float("OSRM_TIMEOUT_SECONDS", default=10.0)
# Gazetteer CSV imports (docs/operations.md "Configuration"): a larger file is refused before
# it is read; one larger than the inline size is imported by a Celery task instead of the admin's
# request.
GAZETTEER_IMPORT_MAX_BYTES = env.int("GAZETTEER_IMPORT_MAX_BYTES", default=10 * 1024 * 1024)
GAZETTEER_IMPORT_MAX_ROWS = env.int("GAZETTEER_IMPORT_MAX_ROWS", default=200_000)
GAZETTEER_IMPORT_INLINE_MAX_BYTES = env.int("GAZETTEER_IMPORT_INLINE_MAX_BYTES", default=256 * 1024)

# Retention (docs/operations.md "Retention"): periodic tasks delete what is past its time, each
# run in batches of RETENTION_BATCH_SIZE rows (a short transaction each, rows a request holds
# skipped) for at most RETENTION_TIME_BUDGET_SECONDS; the next run goes on.
RETENTION_INTERVAL_SECONDS = env.float("RETENTION_INTERVAL_SECONDS", default=3600.0)
RETENTION_BATCH_SIZE = env.int("RETENTION_BATCH_SIZE", default=1000)
RETENTION_TIME_BUDGET_SECONDS = env.float("RETENTION_TIME_BUDGET_SECONDS", default=30.0)
# Webhook deliveries (with their attempts) after they were delivered, or after their last attempt
# failed; `recover` refuses a `since` older than the failed ones' (docs/contract.md).
WEBHOOK_DELIVERED_RETENTION_DAYS = env.int("WEBHOOK_DELIVERED_RETENTION_DAYS", default=30)
WEBHOOK_FAILED_RETENTION_DAYS = env.int("WEBHOOK_FAILED_RETENTION_DAYS", default=90)
# Invites after they were accepted or expired (an expired one whose admin still waits is kept:
# resend-invite renews it).
INVITE_RETENTION_DAYS = env.int("INVITE_RETENTION_DAYS", default=30)
# Couriers: the trail (contract: 24 hours), proof files (signatures and photos, which hold
# people's faces and handwriting) and photos that no proof uses.
COURIER_TRAIL_RETENTION_HOURS = env.int("COURIER_TRAIL_RETENTION_HOURS", default=24)
PROOF_FILE_RETENTION_DAYS = env.int("PROOF_FILE_RETENTION_DAYS", default=180)
UNUSED_PHOTO_RETENTION_HOURS = env.int("UNUSED_PHOTO_RETENTION_HOURS", default=24)

# Celery: Redis broker; tasks acknowledged after they ran so a killed worker loses nothing.
CELERY_BROKER_URL = REDIS_URL
CELERY_BROKER_TRANSPORT = "delivery.broker:Transport"  # kombu's Redis, one client per channel
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
# Celery's Django fixup closes the task thread's database connection after every task unless
# this is set (then every this many tasks); delivery/celery.py closes it by CONN_MAX_AGE and on
# errors instead, as Django does for requests.
CELERY_DB_REUSE_MAX = env.int("CELERY_DB_REUSE_MAX", default=1000)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_TIMEZONE = "UTC"


def _every(seconds: float, *tasks: str) -> dict:
    """Beat entries running each task every `seconds`; one not started within its interval is
    superseded by the next one. Named after the task (`webhooks.sweep`: `webhooks-sweep`)."""
    return {
        task.replace(".", "-").replace("_", "-"): {
            "task": task,
            "schedule": seconds,
            "options": {"expires": seconds},
        }
        for task in tasks
    }


CELERY_BEAT_SCHEDULE: dict = {
    **_every(WEBHOOK_SWEEP_INTERVAL_SECONDS, "webhooks.sweep"),
    **_every(
        60.0,
        # contract "Orders": held partner orders are released at 00:00 zone time of their day.
        "integrations.release_held_orders",
        # Slot holds count for nothing once expired; this removes their rows (slot-holds.md).
        "slots.delete_expired_holds",
        # contract "Dispatch": auto-dispatch plans a zone's day at its slots' cutoffs and before
        # its partner windows, and commits the plans solved since; claims make a second beat
        # harmless.
        "dispatch.auto_dispatch",
    ),
    **_every(
        RETENTION_INTERVAL_SECONDS,
        # contract "Orders": Idempotency-Keys are kept 24 hours; contract "Couriers": drivers'
        # Idempotency-Keys and trails too.
        "integrations.expire_idempotency_keys",
        "couriers.expire_idempotency_keys",
        "couriers.prune_trails",
        # Retention (docs/operations.md "Retention"): what grows without bound goes when due.
        "webhooks.delete_old_deliveries",
        "webhooks.delete_old_events",
        "tenants.delete_expired_auth_tokens",
        "provisioning.delete_old_invites",
        "couriers.delete_old_proof_files",
        "couriers.delete_unused_photos",
    ),
}

# Prometheus metrics at /metrics (delivery/metrics.py). With a token, a scrape must send
# `Authorization: Bearer <METRICS_TOKEN>`; without one, only loopback clients are answered.
# Several processes share counters through PROMETHEUS_MULTIPROC_DIR (set in gunicorn.conf.py).
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")

# Benchmark reference endpoints (docs/performance.md) are served only when this is on.
BENCH_ENDPOINTS = env.bool("BENCH_ENDPOINTS", default=False)

SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
if not DEBUG:
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
    # TLS ends at the proxy in front of us; probes reach the service over plain HTTP.
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_REDIRECT_EXEMPT = [r"^healthz/?$", r"^readyz/?$", r"^metrics/?$"]
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=86400)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)

# docs/operations.md "Logs": web, worker and beat alike (delivery/celery.py applies this to
# Celery too).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "delivery.middleware.RequestIdLogFilter"},
        "periodic_task_runs": {
            "()": "delivery.log_format.PeriodicTaskRunFilter",
            "task_names": sorted({entry["task"] for entry in CELERY_BEAT_SCHEDULE.values()}),
        },
    },
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
        "json": {"()": "delivery.log_format.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["request_id"],
            "formatter": env.str("LOG_FORMAT", default="plain" if DEBUG else "json"),
        }
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.request": {"level": "ERROR"},
        # One INFO line per request (delivery/access_log.py), kept by LOG_LEVEL=INFO or lower.
        "delivery.access": {} if env.bool("ACCESS_LOG", default=True) else {"level": "WARNING"},
        "celery.beat": {"filters": ["periodic_task_runs"]},
        "celery.worker.strategy": {"filters": ["periodic_task_runs"]},
        "celery.worker.request": {"filters": ["periodic_task_runs"]},
        "celery.app.trace": {"filters": ["periodic_task_runs"]},
    },
}
