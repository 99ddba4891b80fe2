"""PhysAlign Studio settings: every value comes from the environment through ``env``.

Embedded defaults (no services needed): SQLite under ``var/``, Celery on kombu's ``filesystem://``
transport under ``var/broker``. Production sets ``DATABASE_URL`` (PostgreSQL) and
``CELERY_BROKER_URL`` (Redis). See ``.env.example`` for every variable.
"""

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(environ.Env().str("PHYSALIGN_VAR_DIR", default=str(BASE_DIR / "var")))

env = environ.Env()
if (BASE_DIR / ".env").is_file():
    environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DJANGO_DEBUG", default=False)
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off.")
    SECRET_KEY = "insecure-development-only-key-set-DJANGO_SECRET_KEY-in-production"

ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files, served by us (the CSP allows no CDN)
    "django_htmx",
    "axes",
    "physalign_site",
    "audit",
    "models_registry",
    "annotation",
    "probes",
    "review",
    "evaluation",
    "solving",
    "home",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # before any view reads a parameter: NUL or a lone surrogate in the path, query or form → a 400 naming it
    "physalign_site.middleware.StorableInputMiddleware",
    "physalign_site.middleware.ApplicationErrorMiddleware",
    # a lost database connection: a read runs again on a fresh one, a write answers 503 + Retry-After, never 500
    "physalign_site.middleware.DatabaseUnavailableMiddleware",
    # the second annotator of a problem never reaches its first annotation (annotation.double.blind)
    "annotation.double.middleware.FirstAnnotationBlind",
    "axes.middleware.AxesMiddleware",  # last: turns a lockout flagged during the view into its response
]

ROOT_URLCONF = "physalign_root.urls"  # above every app; physalign_site.urls holds only the site's own URLs
WSGI_APPLICATION = "physalign_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "physalign_site.roles.roles_context",
                "audit.disclosure.key_holder_context",
                "home.nav.nav_menus",
            ],
        },
    },
]

DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'physalign.sqlite3'}"),
}
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL + a busy timeout let the web process and the Celery worker share the file.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Login throttling (django-axes) for /accounts/login/ and POST /api/auth/token/: after AXES_FAILURE_LIMIT
# failed tries for one username from one address, that pair is refused (even with the right password) until
# AXES_COOLOFF_MINUTES pass without another try. Other users, and the same user elsewhere, are unaffected.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out pair before any password check
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("AXES_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_DISABLE_ACCESS_LOG = True  # failures are what we count; Django keeps last_login
AXES_LOCKOUT_CALLABLE = "physalign_site.auth.lockout_response"
AXES_CLIENT_IP_CALLABLE = "physalign_site.auth.client_ip"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home:home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
MEDIA_ROOT = Path(env.str("PHYSALIGN_MEDIA_ROOT", default=str(VAR_DIR / "media")))
MEDIA_URL = "/media/"  # never served publicly: images go through permission-checked views
STORAGES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
# Media (imported originals, rendered views under views/<sha256[:2]>/<sha256>.png, run item files, import uploads):
# files under MEDIA_ROOT, or an S3-compatible bucket (django-storages) when PHYSALIGN_MEDIA_S3_BUCKET is set.
# Credentials never appear here: boto3 reads AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or a profile, or the
# instance role) from the environment.


def s3_media_storage(values: Any) -> dict[str, Any] | None:
    """The ``STORAGES["default"]`` entry of the bucket that ``values`` (the environment, or a mapping of the
    same names) configure, or None when PHYSALIGN_MEDIA_S3_BUCKET is unset. tests/s3/ builds its storage
    with this function, so the suite's S3 runs use exactly the production configuration."""
    bucket = values.get("PHYSALIGN_MEDIA_S3_BUCKET", "")
    if not bucket:
        return None
    return {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": bucket,
            "endpoint_url": values.get("PHYSALIGN_MEDIA_S3_ENDPOINT_URL", "") or None,  # MinIO, R2, …
            "region_name": values.get("PHYSALIGN_MEDIA_S3_REGION", "") or None,
            "location": values.get("PHYSALIGN_MEDIA_S3_PREFIX", ""),  # a folder inside the bucket
            "default_acl": None,  # the bucket's policy decides; objects are never public by our doing
            "querystring_auth": True,  # never served by URL anyway: every file goes through a role-checked view
            "file_overwrite": True,  # content-addressed names: the same name always holds the same bytes
            # an object read (a download streamed by the app) spills to a temporary file past this size instead of
            # being held whole in memory (django-storages' default, 0, never spills: a 500 MB zip in RAM)
            "max_memory_size": 16 * 1024 * 1024,
        },
    }


if (_s3 := s3_media_storage(os.environ)) is not None:
    STORAGES["default"] = _s3
# Release folders (the Kit layout that validate_release, inspect_ai and the exports read) are written under
# PHYSALIGN_RELEASES_ROOT, by default MEDIA_ROOT/releases without a bucket. With a bucket, web and worker share no
# disk: the bucket holds each release (releases/<release_id>/ and its built zips) and this folder (by default
# var/releases) is only a local working copy, filled from the bucket when a process needs a release's folder
# (probes.release_store).
RELEASES_ROOT = env.str("PHYSALIGN_RELEASES_ROOT", default="")
WHITENOISE_USE_FINDERS = DEBUG
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=10 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# Image intake limits (Kit §2.10 plus our own caps against decompression bombs).
PHYSALIGN_IMAGE_MAX_PIXELS = env.int("PHYSALIGN_IMAGE_MAX_PIXELS", default=40_000_000)
PHYSALIGN_IMAGE_MAX_BYTES = env.int("PHYSALIGN_IMAGE_MAX_BYTES", default=25 * 1024 * 1024)
PHYSALIGN_IMPORT_MAX_BYTES = env.int("PHYSALIGN_IMPORT_MAX_BYTES", default=500 * 1024 * 1024)
PHYSALIGN_IMPORT_MAX_UNCOMPRESSED_BYTES = env.int(
    "PHYSALIGN_IMPORT_MAX_UNCOMPRESSED_BYTES", default=4 * PHYSALIGN_IMPORT_MAX_BYTES
)
# An archive (or one entry) may expand at most this many times (a 306 KB zip of 300 MB of zeros is refused).
PHYSALIGN_IMPORT_MAX_ZIP_RATIO = env.int("PHYSALIGN_IMPORT_MAX_ZIP_RATIO", default=100)
# The longest text an import may store in one field or one string of a document (statement, option, label).
PHYSALIGN_TEXT_MAX_CHARS = env.int("PHYSALIGN_TEXT_MAX_CHARS", default=50_000)
# Autosaves by one user within this many minutes of each other make one history version (0: one per save).
PHYSALIGN_VERSION_COALESCE_MINUTES = env.int("PHYSALIGN_VERSION_COALESCE_MINUTES", default=5)

# Security headers. HTTPS-only cookies and redirects are on unless DEBUG or explicitly disabled
# (a plain-HTTP local demo sets DJANGO_SECURE_SSL=false).
SECURE_SSL = env.bool("DJANGO_SECURE_SSL", default=not DEBUG)
SECURE_SSL_REDIRECT = SECURE_SSL
SESSION_COOKIE_SECURE = SECURE_SSL
CSRF_COOKIE_SECURE = SECURE_SSL
SECURE_HSTS_SECONDS = env.int("DJANGO_HSTS_SECONDS", default=31536000 if SECURE_SSL else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_SSL
SECURE_HSTS_PRELOAD = SECURE_SSL
# Trust X-Forwarded-Proto (and X-Forwarded-For, for login throttling) only when a proxy in front of us sets
# them and drops what clients send; otherwise any client could claim HTTPS or another address.
BEHIND_PROXY = env.bool("DJANGO_BEHIND_PROXY", default=False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_PROXY else None
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:", "blob:"],
    "connect-src": [CSP.SELF],
    "font-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
}

REST_FRAMEWORK = {
    # Token first: DRF answers an unauthenticated call with the first class's WWW-Authenticate challenge
    # (401 + "WWW-Authenticate: Token"); session auth still needs the CSRF token for unsafe methods.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PARSER_CLASSES": [
        "physalign_site.parsers.JSONParser",  # size, depth and storable-string limits (physalign_site.jsonsafety)
        "physalign_site.parsers.FormParser",  # the size limit and the storable-text check of its fields
        "physalign_site.parsers.MultiPartParser",  # the storable-text check of its fields
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.SearchFilter",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_PAGINATION_CLASS": "physalign_site.api.ApiCursorPagination",  # the one page rule of every list
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "physalign_site.errors.api_exception_handler",
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "PhysAlign Studio API",
    "DESCRIPTION": "Problems, pass documents, probes, reviews, releases and evaluations.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # /api/docs/ loads Swagger UI from our static files (drf-spectacular-sidecar), never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},  # no badge from validator.swagger.io
}

# Celery: a real worker in every mode; only the broker differs.
BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("queue", "processed", "control"):
        (BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "store_processed": False,
        # broadcasts (worker pings: a command checks a worker answers) need one absolute folder for everyone
        "control_folder": str(BROKER_DIR / "control"),
    }
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default="") or None
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # a task whose worker died unacknowledged is redelivered after this many seconds (kombu's default)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=3600),
        # seconds between sweeps for such tasks = interval × throttle (kombu's defaults: 10 × 10)
        "unacked_restore_interval": env.int("CELERY_UNACKED_RESTORE_INTERVAL", default=10),
        "unacked_restore_throttle": env.int("CELERY_UNACKED_RESTORE_THROTTLE", default=10),
    }
# Provider calls one evaluation chunk task keeps in flight (threads in the worker process): a run's
# concurrency is worker processes × this, still capped per model by max_concurrency and the shared limiter.
EVAL_CHUNK_THREADS = env.int("EVAL_CHUNK_THREADS", default=8)

# Model configs name the environment variable holding their key and choose a base URL (enforced
# on save and before every call by llm/endpoint_policy.py). A key variable must fully match this regex
# (exact names work too: "OPENAI_API_KEY|VLLM_TOKEN") and is never one of the app's own variables
# (every name .env.example documents outside its "Model providers" section, and the DJANGO_, CELERY_,
# POSTGRES_, PHYSALIGN_, DATABASE_, DB_ and REDIS_ prefixes: models_registry.providers.endpoint_policy).
PHYSALIGN_MODEL_KEY_ENV_PATTERN = env.str(
    "PHYSALIGN_MODEL_KEY_ENV_PATTERN", default=r"[A-Z][A-Z0-9_]*_API_KEY"
)
# Base URLs on loopback or private networks (a local vLLM or Ollama) only when on. Link-local (cloud
# metadata), unspecified, multicast and reserved addresses are refused regardless.
PHYSALIGN_MODEL_ALLOW_PRIVATE_URLS = env.bool("PHYSALIGN_MODEL_ALLOW_PRIVATE_URLS", default=False)

REDIS_URL = env.str("REDIS_URL", default="")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    # A refused request (4xx: PermissionDenied, a SuspiciousOperation, an ApplicationError) is one line;
    # tracebacks are for server errors.
    "filters": {"client_errors_one_line": {"()": "physalign_site.logfilters.ClientErrorsOneLine"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["client_errors_one_line"],
        }
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"axes": {"level": "WARNING"}},  # failures and lockouts; not every successful login
}

SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # container healthchecks speak plain HTTP inside the network
