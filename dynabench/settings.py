"""Settings for the Dynabench platform.

Everything that differs between a laptop and production comes from an environment variable with a
safe default (SQLite and an embedded Redis under ``var/`` on a laptop). Every variable, its default
and meaning: docs/operate/configuration.md, which a test keeps in step with this file.
"""

import json
import os
import secrets
import tempfile
from datetime import timedelta
from pathlib import Path

import dj_database_url
import dj_email_url
from csp.constants import NONE, SELF

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("DYNABENCH_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _secret_key() -> str:
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    path = VAR_DIR / "secret_key"
    if not path.exists():
        # Processes starting together (web, workers, scheduler) must all end up with one key:
        # write it whole to a file of this process, then link it into place; link() fails for
        # all but the first, and those read the first one's complete file.
        fd, staged = tempfile.mkstemp(dir=VAR_DIR, prefix=".secret_key-")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_urlsafe(50))
            os.link(staged, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(staged)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = _env_bool("DEBUG", False)
ALLOWED_HOSTS = [h.strip() for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",") if h.strip()]
CSRF_TRUSTED_ORIGINS = [o.strip() for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()]
# The site's public address: absolute links where no request is at hand (a release's citation and
# CITATION.cff, notification emails).
SITE_URL = os.environ.get("SITE_URL", "http://localhost:8000").rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_rq",
    "django_htmx",
    "csp",
    "dynabench.apps.DynabenchConfig",
    "tasks",
    "annotation",
    "validation",
    "leaderboard",
    "console",
    "cycle",
    "community",
    "releases",
    "axes",  # login lockout; keep last (its checks look at the other apps' settings)
]

MIDDLEWARE = [
    # Outermost: a request id, the request's metrics and its JSON log line for everything below (static files included).
    "dynabench.request_observer.ObserveRequestsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",  # serves STATIC_ROOT (collectstatic) with DEBUG off
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "dynabench.middleware.RefuseNullBytesInQueryMiddleware",
    "dynabench.upload_limits.UploadLimitMiddleware",  # before CSRF, whose process_view reads the body
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # turns a locked-out login attempt into the lockout page (429)
]

# Content-Security-Policy (django-csp): scripts and styles only from our own static files; no
# inline <script>, no event-handler attributes, no style attributes, no eval (htmx runs with
# allowEval=false, see templates/base.html). The django-rq dashboard (superusers only) relaxes
# it for its inline scripts (dynabench/rq_dashboard.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "media-src": [SELF, "blob:"],  # a recording played back in the page before it is sent (static/js/record.js)
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    },
}

ROOT_URLCONF = "dynabench.urls"

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
                "dynabench.context_processors.model_wait",
            ],
        },
    },
]

WSGI_APPLICATION = "dynabench.wsgi.application"
ASGI_APPLICATION = "dynabench.asgi.application"

DB_POOL_MAX_SIZE = max(0, int(os.environ.get("DB_POOL_MAX_SIZE", "10")))
DB_POOL_MIN_SIZE = max(0, int(os.environ.get("DB_POOL_MIN_SIZE", "1")))
DB_POOL_TIMEOUT_S = float(os.environ.get("DB_POOL_TIMEOUT_S", "10"))
DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")),
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Several processes (web, worker) share the file: wait for locks instead of failing.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 30, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )
    DATABASES["default"]["CONN_MAX_AGE"] = 0
elif DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # Server-side parameter binding: psycopg sends the SQL text and the parameters apart, and
    # prepares a statement the server has seen 5 times on a connection, so the hot path's
    # statements are parsed and planned once per connection instead of once per request.
    DATABASES["default"].setdefault("OPTIONS", {}).update({"server_side_binding": True, "prepare_threshold": 5})
    # A connection that a PostgreSQL restart ended is noticed and replaced before a request uses it.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # Each process keeps its connections in one pool of at most DB_POOL_MAX_SIZE (psycopg_pool): a
    # request borrows one and gives it back when it ends, and a request that finds none free waits up
    # to DB_POOL_TIMEOUT_S, then answers 503 (dynabench/outages.py). Without it every thread that ran a
    # database step (an async view's steps run on a thread of their own per request) kept a connection
    # of its own, and many concurrent requests ran PostgreSQL out of connections. DB_POOL_MAX_SIZE=0:
    # no pool, a persistent connection per thread (DB_CONN_MAX_AGE). How many a deployment needs:
    # docs/operate/postgres-redis.md.
    if DB_POOL_MAX_SIZE > 0:
        DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps them; Django gives each back at the request's end
        DATABASES["default"]["OPTIONS"]["pool"] = {
            "min_size": min(DB_POOL_MIN_SIZE, DB_POOL_MAX_SIZE), "max_size": DB_POOL_MAX_SIZE, "timeout": DB_POOL_TIMEOUT_S,
        }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis: explicit server, or the embedded one (see dynabench/embedded_redis.py).
EMBEDDED_REDIS = not os.environ.get("REDIS_URL")
EMBEDDED_REDIS_SOCKET = VAR_DIR / "redis.sock"
REDIS_URL = os.environ.get("REDIS_URL") or f"unix://{EMBEDDED_REDIS_SOCKET}?db=0"

CACHES = {
    "default": {
        "BACKEND": "dynabench.cache.RedisCache",  # Django's, keeping one client per pool
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": os.environ.get("CACHE_KEY_PREFIX", "dynabench"),
    }
}

# Sessions are read from the cache (Redis) and written through to the database: every logged-in
# request reads its session, and a cache hit spares it a database query. While Redis is out, reads
# fall back to the database and writes are refused (503) before anything changes (dynabench/sessions.py).
SESSION_ENGINE = "dynabench.sessions"

RQ_ASYNC = _env_bool("RQ_ASYNC", True)
RQ_QUEUES = {
    name: {"URL": REDIS_URL, "DEFAULT_TIMEOUT": timeout, "ASYNC": RQ_ASYNC}
    for name, timeout in (("default", 600), ("evaluation", 3600), ("training", 3600))
}
# Workers (manage.py rqworker --with-scheduler) keep the reaper job alive: leaderboard/worker.py.
# Jobs carry the request id of the request that queued them (dynabench/job_observer.py).
RQ = {"WORKER_CLASS": "leaderboard.worker.ReapingWorker", "QUEUE_CLASS": "dynabench.job_observer.RequestQueue"}
# Imported once by each RQ worker before it forks a work horse per job (leaderboard/worker.py), so
# no job pays for importing torch again.
RQ_WORKER_PRELOAD = (
    "torch", "transformers.modeling_utils", "transformers.models.auto.modeling_auto",
    "transformers.models.auto.tokenization_auto", "transformers.models.bert.modeling_bert",
    "transformers.data.data_collator", "transformers.optimization",
    "sklearn.metrics",  # the classification metrics (a slow import, through scipy.stats)
)

# Login lockout (django-axes): after LOGIN_FAILURE_LIMIT wrong passwords for one username from one
# client address, that pair is refused (429) for LOGIN_COOLOFF_MINUTES, on /accounts/login/,
# /admin/login/ and POST /api/v1/auth/token alike (all go through django.contrib.auth.authenticate).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "dynabench.backends.ModelBackend",  # Django's, with a get_user that skips queryset compilation
]
TRUSTED_PROXY_COUNT = int(os.environ.get("TRUSTED_PROXY_COUNT", "0"))
AXES_FAILURE_LIMIT = int(os.environ.get("LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_CLIENT_IP_CALLABLE = "dynabench.proxies.client_ip"
AXES_RESET_ON_SUCCESS = True
# Our own lockout answer: the page, or JSON for XMLHttpRequest, without axes' own
# Access-Control-Allow-Origin: * (which let any site read the lockout reply).
AXES_LOCKOUT_CALLABLE = "dynabench.accounts.lockout_response"
AXES_VERBOSE = False

# Email (password reset): EMAIL_URL (dj-email-url syntax) or EMAIL_BACKEND; console by default.
if os.environ.get("EMAIL_URL"):
    globals().update({k: v for k, v in dj_email_url.parse(os.environ["EMAIL_URL"]).items() if v is not None})
else:
    EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "dynabench@localhost")
# Password reset requests per clock hour, from one client address and for one email address
# (whether or not an account has it); past either, a 429 page says when to try again. 0: no limit.
PASSWORD_RESET_PER_ADDRESS_PER_HOUR = int(os.environ.get("PASSWORD_RESET_PER_ADDRESS_PER_HOUR", "10"))
PASSWORD_RESET_PER_EMAIL_PER_HOUR = int(os.environ.get("PASSWORD_RESET_PER_EMAIL_PER_HOUR", "3"))
# Accounts created from one client address per day (0: no limit): throwaway accounts would multiply
# every per-account limit.
SIGNUP_PER_ADDRESS_PER_DAY = int(os.environ.get("SIGNUP_PER_ADDRESS_PER_DAY", "5"))
# Paid-crowd study entries (annotation/crowd.py): per client address per clock hour and per study
# per minute (0: no limit); past either the entry page answers 429.
CROWD_ENTRIES_PER_ADDRESS_PER_HOUR = int(os.environ.get("CROWD_ENTRIES_PER_ADDRESS_PER_HOUR", "10"))
CROWD_ENTRIES_PER_STUDY_PER_MINUTE = int(os.environ.get("CROWD_ENTRIES_PER_STUDY_PER_MINUTE", "30"))
# Where a study's optional entry look-up asks (annotation/crowd_lookup.py); tests point them at a
# local stand-in server.
PROLIFIC_API_URL = os.environ.get("PROLIFIC_API_URL", "https://api.prolific.com")
MTURK_API_URL = os.environ.get("MTURK_API_URL", "https://mturk-requester.us-east-1.amazonaws.com")
MTURK_SANDBOX_API_URL = os.environ.get("MTURK_SANDBOX_API_URL", "https://mturk-requester-sandbox.us-east-1.amazonaws.com")
# Examples a validator may skip in one round per day (0: no limit): skipping without end would let
# a validator walk the queue to a chosen example.
VALIDATION_SKIPS_PER_DAY = int(os.environ.get("VALIDATION_SKIPS_PER_DAY", "50"))

# Production (DYNABENCH_PRODUCTION=1): HTTPS only. Behind a proxy that terminates TLS, it must
# set X-Forwarded-Proto (and strip it from clients). `manage.py check --deploy` reports nothing.
DYNABENCH_PRODUCTION = _env_bool("DYNABENCH_PRODUCTION", False)
if DYNABENCH_PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = _env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = _env_bool("SECURE_HSTS_PRELOAD", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # The health check is probed over plain HTTP inside the network.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "annotation:task_list"
LOGOUT_REDIRECT_URL = "annotation:task_list"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
# The pages are written in English only: without the translation machinery every gettext call,
# form label and number in a template skips the active-language lookup (Django's performance
# docs). Turn it on again together with LocaleMiddleware when translations arrive.
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"  # filled by collectstatic, served by WhiteNoise
STATIC_ROOT.mkdir(exist_ok=True)
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", VAR_DIR / "media"))
MEDIA_URL = "media/"
MODELS_DIR = Path(os.environ.get("DYNABENCH_MODELS_DIR", VAR_DIR / "models"))
# The licence a dataset's Croissant description names when its task's config sets no "license" (tasks/data/croissant.py).
DATASET_LICENSE = os.environ.get("DATASET_LICENSE", "https://creativecommons.org/licenses/by/4.0/")

# Files shared by every web process and worker (model artefacts, prediction files, staged
# uploads) go through Django's storage API: the local file system under MEDIA_ROOT by default;
# in production an S3-compatible bucket with django-storages (docs/operate/scaling.md):
# STORAGE_BACKEND=storages.backends.s3.S3Storage and STORAGE_OPTIONS as JSON.
STORAGES = {
    "default": {
        "BACKEND": os.environ.get("STORAGE_BACKEND", "django.core.files.storage.FileSystemStorage"),
        "OPTIONS": json.loads(os.environ.get("STORAGE_OPTIONS", "{}")),
    },
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Each worker keeps the model artefacts it ran in a local cache, one folder per checksum.
ARTEFACT_CACHE_DIR = Path(os.environ.get("DYNABENCH_ARTEFACT_CACHE", VAR_DIR / "artefact-cache"))

# Uploads: archives are streamed to disk; the submission checks enforce their own cap.
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "dynabench.schema.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "dynabench.pagination.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "dynabench.api.exception_handler",
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
    "DEFAULT_PARSER_CLASSES": [
        "dynabench.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # Scoped rate limits per user (per IP when anonymous), counted in the cache (Redis).
    "DEFAULT_THROTTLE_CLASSES": ["dynabench.throttling.ScopedRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "auth": os.environ.get("API_RATE_AUTH", "30/hour"),
        "examples": os.environ.get("API_RATE_EXAMPLES", "1000/day"),
        "validations": os.environ.get("API_RATE_VALIDATIONS", "3000/day"),
        "model_uploads": os.environ.get("API_RATE_MODEL_UPLOADS", "20/day"),
        "model_checks": os.environ.get("API_RATE_MODEL_CHECKS", "200/day"),
    },
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Dynabench API",
    "DESCRIPTION": (
        "Dynamic adversarial data collection and model benchmarking.\n\n"
        "**Labels.** Train splits and published sets are public: `GET /datasets/{id}/items` returns their `target`. "
        "Test splits and every set that counts toward the Dynascore are hidden unless an owner publishes them: their "
        "items come with `uid` and `input` only (`target` and `metadata` null) to everyone but the task's owners and "
        "admins. `labels_hidden` says whether a dataset (or an example) is hidden, the same for every reader, owners "
        "included; `targets_visible` on a dataset says whether your requests get its targets. Your own figures in "
        "`GET /me` leave out your examples in hidden splits of tasks you do not own. On hidden sets you get "
        "aggregate scores only (no per-item correctness, no small per-tag groups).\n\n"
        "**A current leaderboard.** Whenever a round closes, a dataset is imported or replaced, or a model is "
        "uploaded, published or retrained, the missing evaluations (model x dataset) are queued after the change "
        "commits; a pending model names the datasets it lacks. Every run records the model's and the dataset's "
        "checksums, the dataset version and the code version."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and ReDoc served from our own static files (drf-spectacular-sidecar): no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "ENUM_NAME_OVERRIDES": {
        "RoundStatusEnum": "tasks.models.Round.Status",
        "ModelStatusEnum": "tasks.models.MLModel.Status",
        "ModelKindEnum": "tasks.models.MLModel.Kind",
        "TaskKindEnum": "tasks.models.TaskKind",
        "EvaluationStatusEnum": "leaderboard.models.EvaluationRun.Status",
        "ChatModeEnum": "annotation.chat.MODES",
        "ValidationModeEnum": "validation.models.Validation.Mode",
    },
}

# Every log line carries the request id of the request or job that caused it ("-" outside one); the
# dynabench.events logger writes one bare JSON line per request and per job (dynabench/request_ids.py).
# Django's own "django.server"/"django.request" lines say less than those and stay as they were.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "dynabench.request_ids.RequestIdFilter"}},
    "formatters": {
        "line": {"format": "%(levelname)s %(name)s [%(request_id)s] %(message)s"},
        "bare": {"format": "%(message)s"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "filters": ["request_id"], "formatter": "line"},
        "events": {"class": "logging.StreamHandler", "formatter": "bare"},
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # httpx logs a line per request at INFO (endpoint models, tasks/loop/endpoints/): failures are logged there instead.
    "loggers": {
        "django.db.backends": {"level": "INFO"}, "httpx": {"level": "WARNING"}, "httpcore": {"level": "WARNING"},
        "dynabench.events": {"handlers": ["events"], "propagate": False},
    },
}

# Prometheus metrics (dynabench/metrics.py): recorded by every process and served at /metrics to
# loopback, or to anyone presenting "Authorization: Bearer <DYNABENCH_METRICS_TOKEN>" when it is set.
# DYNABENCH_METRICS=0 records nothing and answers /metrics with 404. Several processes add up their
# values through PROMETHEUS_MULTIPROC_DIR (scripts/run.sh sets it).
DYNABENCH_METRICS = _env_bool("DYNABENCH_METRICS", True)
DYNABENCH_METRICS_TOKEN = os.environ.get("DYNABENCH_METRICS_TOKEN", "")

# Models behind endpoints (tasks/loop/endpoints/). The allow-list: host names, *.suffix patterns or networks,
# each with its port or port range (comma-separated), e.g. "api.openai.com,*.together.xyz:443,10.20.0.0/16:8000-8100";
# an entry without a port allows only 80/443; empty: no endpoint may be called. Link-local and metadata
# addresses are always refused; addresses inside the platform's own networks (DYNABENCH_ENDPOINT_BLOCKED_NETWORKS,
# loopback and private ranges by default) only when a network entry names them (e.g. 127.0.0.1/32:11434 for
# an Ollama on the same machine).
DYNABENCH_ENDPOINT_ALLOWLIST = [e.strip() for e in os.environ.get("DYNABENCH_ENDPOINT_ALLOWLIST", "").split(",") if e.strip()]
DYNABENCH_ENDPOINT_BLOCKED_NETWORKS = [
    e.strip() for e in os.environ.get(
        "DYNABENCH_ENDPOINT_BLOCKED_NETWORKS",
        "127.0.0.0/8,::1/128,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,100.64.0.0/10,fc00::/7,0.0.0.0/8",
    ).split(",") if e.strip()
]
DYNABENCH_ENDPOINT_MAX_RESPONSE_BYTES = int(os.environ.get("DYNABENCH_ENDPOINT_MAX_RESPONSE_BYTES", str(2**20)))
DYNABENCH_ENDPOINT_BREAKER_FAILURES = int(os.environ.get("DYNABENCH_ENDPOINT_BREAKER_FAILURES", "5"))
DYNABENCH_ENDPOINT_BREAKER_COOLDOWN_S = float(os.environ.get("DYNABENCH_ENDPOINT_BREAKER_COOLDOWN_S", "30"))
DYNABENCH_ENDPOINT_KEY_ENV_PREFIX = os.environ.get("DYNABENCH_ENDPOINT_KEY_ENV_PREFIX", "DYNABENCH_ENDPOINT_KEY_")

# Model registry (tasks/loop/registry.py): the per-process cache of loaded target models, bounded by
# count and by the bytes of their parameters; DYNABENCH_WARM_MODELS=1 loads the models in the
# loop of open rounds when a web process starts (in a background thread).
DYNABENCH_REGISTRY_MAX_MODELS = int(os.environ.get("DYNABENCH_REGISTRY_MAX_MODELS", "4"))
DYNABENCH_REGISTRY_MAX_GIB = float(os.environ.get("DYNABENCH_REGISTRY_MAX_GIB", "4"))
DYNABENCH_WARM_MODELS = _env_bool("DYNABENCH_WARM_MODELS", False)
# Diversity (annotation/diversity/): queue the embedding of each new example (the test suite turns it
# off; its diversity tests embed directly). DYNABENCH_EMBEDDING_ENCODER (tests only) names another encoder.
DYNABENCH_EMBED_ON_ARRIVAL = _env_bool("DYNABENCH_EMBED_ON_ARRIVAL", True)
# A round's diversity report is computed again by itself when its validated fooling examples grow by this
# fraction (annotation/diversity/refresh.py); 0 turns it off (the test suite does).
DYNABENCH_DIVERSITY_REFRESH = float(os.environ.get("DYNABENCH_DIVERSITY_REFRESH", "0.25"))

# The longest a page waits for a model's answer (s): an endpoint's timeout may not exceed it, a chat
# turn whose model stalls ends after it, and the pages say it while they wait.
DYNABENCH_MODEL_WAIT_S = int(os.environ.get("DYNABENCH_MODEL_WAIT_S", "300"))
# Annotation: examples one annotator may submit per minute (sandbox tries count too); 0 turns it off.
ANNOTATION_SUBMISSIONS_PER_MINUTE = int(os.environ.get("ANNOTATION_SUBMISSIONS_PER_MINUTE", "20"))
# Tries of the model in the sandbox per visitor (user, or address for visitors) per clock hour; 0: no limit.
SANDBOX_TRIES_PER_HOUR = int(os.environ.get("SANDBOX_TRIES_PER_HOUR", "30"))

# Leaderboard (leaderboard/services.py, leaderboard/jobs.py): submission caps, evaluation, Dynascore.
MODEL_ARCHIVE_MAX_BYTES = int(os.environ.get("MODEL_ARCHIVE_MAX_BYTES", str(2 * 1024**3)))
MODEL_ARCHIVE_MAX_UNPACKED_BYTES = int(os.environ.get("MODEL_ARCHIVE_MAX_UNPACKED_BYTES", str(4 * 1024**3)))
# The request decompresses nothing of an archive: the job leaderboard.jobs.unpack_model reads it member by
# member against MODEL_ARCHIVE_MAX_UNPACKED_BYTES, and is started at most UNPACK_MAX_ATTEMPTS times
# when its worker dies. Submission attempts (accepted or refused) per user and clock hour, page and
# API alike (leaderboard/services.py:count_upload_attempt); 0 turns it off.
MODEL_UPLOAD_ATTEMPTS_PER_HOUR = int(os.environ.get("MODEL_UPLOAD_ATTEMPTS_PER_HOUR", "10"))
UNPACK_MAX_ATTEMPTS = int(os.environ.get("UNPACK_MAX_ATTEMPTS", "3"))
PREDICTIONS_MAX_BYTES = int(os.environ.get("PREDICTIONS_MAX_BYTES", str(200 * 1024**2)))
# Contexts/dataset files uploaded through the owner's console: the largest file accepted, and
# the number of records above which the import runs in an RQ job with a progress bar.
CONSOLE_UPLOAD_MAX_BYTES = int(os.environ.get("CONSOLE_UPLOAD_MAX_BYTES", str(100 * 1024**2)))
CONSOLE_UPLOAD_JOB_ROWS = int(os.environ.get("CONSOLE_UPLOAD_JOB_ROWS", "3000"))
# SQLite imports commit each batch of 1,000 rows alone (tasks/data/importers/writing.py:Commits) and then leave the
# write lock free this many times as long as the batch held it, so logins and other writes get in; 0: no pause.
SQLITE_IMPORT_PAUSE_RATIO = float(os.environ.get("SQLITE_IMPORT_PAUSE_RATIO", "1.0"))

# Images uploaded as contexts (tasks.data.images): the largest image in bytes, in pixels (also
# Pillow's decompression-bomb guard) and per side; a zip's member count and unpacked bytes.
IMAGE_MAX_BYTES = int(os.environ.get("IMAGE_MAX_BYTES", str(20 * 1024**2)))
IMAGE_MAX_PIXELS = int(os.environ.get("IMAGE_MAX_PIXELS", str(40_000_000)))
IMAGE_MAX_SIDE = int(os.environ.get("IMAGE_MAX_SIDE", "10000"))
IMAGE_ZIP_MAX_MEMBERS = int(os.environ.get("IMAGE_ZIP_MAX_MEMBERS", "5000"))
IMAGE_ZIP_MAX_BYTES = int(os.environ.get("IMAGE_ZIP_MAX_BYTES", str(100 * 1024**2)))
# Audio clips uploaded as contexts (tasks.data.audio): the largest file in bytes, the longest clip in
# seconds, the sample rates and channel count accepted, a zip's member count and unpacked bytes,
# and the seconds of audio one task may hold in all (the quota).
AUDIO_MAX_BYTES = int(os.environ.get("AUDIO_MAX_BYTES", str(20 * 1024**2)))
AUDIO_MAX_SECONDS = float(os.environ.get("AUDIO_MAX_SECONDS", "60"))
AUDIO_MIN_SAMPLE_RATE = int(os.environ.get("AUDIO_MIN_SAMPLE_RATE", "8000"))
AUDIO_MAX_SAMPLE_RATE = int(os.environ.get("AUDIO_MAX_SAMPLE_RATE", "96000"))
AUDIO_MAX_CHANNELS = int(os.environ.get("AUDIO_MAX_CHANNELS", "2"))
AUDIO_ZIP_MAX_MEMBERS = int(os.environ.get("AUDIO_ZIP_MAX_MEMBERS", "2000"))
AUDIO_ZIP_MAX_BYTES = int(os.environ.get("AUDIO_ZIP_MAX_BYTES", str(200 * 1024**2)))
AUDIO_TASK_QUOTA_SECONDS = float(os.environ.get("AUDIO_TASK_QUOTA_SECONDS", str(20 * 3600)))
# Generated images no example references are removed this long after they were generated
# (manage.py remove_unjudged_images, annotation/generated_images.py; never under six hours).
DYNABENCH_GENERATED_IMAGE_GRACE_S = int(os.environ.get("DYNABENCH_GENERATED_IMAGE_GRACE_S", str(24 * 3600)))
# Upload routes (URL names) and the setting that holds the largest file each takes, in bytes:
# dynabench.upload_limits.UploadLimitMiddleware refuses a bigger body with a 413 while it arrives
# (a Content-Length over it before reading anything), so nothing over the limit is received or stored.
UPLOAD_LIMITS = {
    "console:uploads": "CONSOLE_UPLOAD_MAX_BYTES",
    "console:images": "IMAGE_ZIP_MAX_BYTES",
    "annotation:upload_image": "IMAGE_MAX_BYTES",
    "annotation:upload_audio": "AUDIO_MAX_BYTES",
    "task-uploads": "CONSOLE_UPLOAD_MAX_BYTES",
    "task-images": "IMAGE_ZIP_MAX_BYTES",
    "console:audio": "AUDIO_ZIP_MAX_BYTES",
    "task-audio": "AUDIO_ZIP_MAX_BYTES",
    "context-list": "CONSOLE_UPLOAD_MAX_BYTES",
    "leaderboard:submit": "MODEL_ARCHIVE_MAX_BYTES",  # an archive or a predictions file; the larger limit
    "model-list": "MODEL_ARCHIVE_MAX_BYTES",
    "model-predictions": "PREDICTIONS_MAX_BYTES",
    "community:propose": "CONSOLE_UPLOAD_MAX_BYTES",  # a definition file and a first dataset
    "community:revise_proposal": "CONSOLE_UPLOAD_MAX_BYTES",
}
MODEL_SUBMISSIONS_PER_DAY = int(os.environ.get("MODEL_SUBMISSIONS_PER_DAY", "5"))
EVALUATION_STALE_AFTER_S = int(os.environ.get("EVALUATION_STALE_AFTER_S", "600"))
EVALUATION_MAX_ATTEMPTS = int(os.environ.get("EVALUATION_MAX_ATTEMPTS", "3"))
# Evaluations of more than EVALUATION_SHARD_ITEMS items are split into shards of that many items
# (item-id ranges) that any worker takes; a shard is tried EVALUATION_SHARD_ATTEMPTS times.
EVALUATION_SHARD_ITEMS = int(os.environ.get("EVALUATION_SHARD_ITEMS", "2000"))
# For this many seconds a job that has loaded a model also evaluates the model's other queued runs
# (leaderboard.jobs.evaluate_run); 0: one run a job.
EVALUATION_BATCH_SECONDS = float(os.environ.get("EVALUATION_BATCH_SECONDS", "300"))
EVALUATION_SHARD_ATTEMPTS = int(os.environ.get("EVALUATION_SHARD_ATTEMPTS", "2"))
# The reaper (leaderboard/reaper.py), a repeating job every worker makes sure exists: every
# REAPER_PERIOD_S it re-queues or fails runs, shards, trainings and unpackings whose worker died.
REAPER_PERIOD_S = int(os.environ.get("REAPER_PERIOD_S", "60"))
# Seconds an RQ worker's registration lives in Redis without a heartbeat; an idle worker beats every
# RQ_WORKER_TTL - 15 s, and on each beat registers again and reschedules the reaper if Redis lost them
# (leaderboard/worker.py). manage.py rqworker --worker-ttl N overrides it.
RQ_WORKER_TTL = max(20, int(os.environ.get("RQ_WORKER_TTL", "60")))
TRAINING_STALE_AFTER_S = int(os.environ.get("TRAINING_STALE_AFTER_S", "600"))
# Per-user storage quota of submitted model artefacts, counted in unpacked bytes.
MODEL_STORAGE_QUOTA_BYTES = int(os.environ.get("MODEL_STORAGE_QUOTA_BYTES", str(10 * 1024**3)))
EVALUATION_MACHINE_MEMORY_GIB = float(os.environ.get("EVALUATION_MACHINE_MEMORY_GIB", "0")) or None  # None: this machine's RAM
LEADERBOARD_BOOTSTRAP_RESAMPLES = int(os.environ.get("LEADERBOARD_BOOTSTRAP_RESAMPLES", "1000"))

# Training (tasks/loop/training/hyperparameters.py): torch threads of one training. A fixed count (default 1), so that
# the same data and seed give the same weights whatever the machine's load (the weights differ in
# their last bits from one thread count to another); 0 follows the load (the cores not busy).
DYNABENCH_TRAINING_THREADS = max(0, int(os.environ.get("DYNABENCH_TRAINING_THREADS", "1")))
# Training (tasks/loop/training/base_encoder.py): train from another local encoder than MiniLM, pinned by the sha256
# of its model.safetensors (manage.py run_cycle --base-model passes these to its worker).
if os.environ.get("DYNABENCH_TRAINING_BASE_ENCODER"):
    DYNABENCH_TRAINING_BASE_ENCODER = {
        "path": os.environ["DYNABENCH_TRAINING_BASE_ENCODER"],
        "sha256": os.environ.get("DYNABENCH_TRAINING_BASE_ENCODER_SHA256", ""),
        "name": os.path.basename(os.environ["DYNABENCH_TRAINING_BASE_ENCODER"].rstrip("/")),
    }
