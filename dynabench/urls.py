"""Top-level URLs: each app owns its pages (``<app>/urls.py``) and its API (``<app>/api_urls.py``).

The API docs use drf-spectacular's split Swagger view (its setup script is a separate file),
so they work under the Content-Security-Policy without inline scripts; Swagger UI sets
inline styles, so that page alone allows them (``style-src 'unsafe-inline'``).
"""

from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from django.conf import settings
from django.contrib import admin
from django.templatetags.static import static as static_url
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from dynabench import accounts, health, metrics_view, rq_dashboard

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", health.healthz, name="healthz"),
    path("metrics", metrics_view.metrics_view, name="metrics"),
    # Browsers and crawlers ask for /favicon.ico whatever the page links: send them the site's icon.
    path("favicon.ico", RedirectView.as_view(url=static_url("favicon.svg"), permanent=True), name="favicon"),
    path("accounts/signup/", accounts.signup, name="signup"),
    path("accounts/token/", accounts.api_token, name="api_token"),
    path("accounts/password_reset/", accounts.PasswordResetView.as_view(), name="password_reset"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("django-rq/", include((rq_dashboard.urlpatterns(), "django_rq"))),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", csp_update({"style-src": [UNSAFE_INLINE]})(SpectacularSwaggerSplitView.as_view(url_name="api-schema")), name="api-docs"),
    path("api/v1/", include("dynabench.api_urls")),
    path("", include("annotation.urls")),
    path("", include("validation.urls")),
    path("", include("leaderboard.urls")),
    path("", include("console.urls")),
    path("", include("community.urls")),
    path("", include("releases.urls")),
    path("", include("tasks.urls")),
]

# An outage (Redis out, no free database connection) answers 503 with its message; any other
# unhandled error Django's 500 (dynabench/outages.py).
handler500 = "dynabench.outages.server_error"

if settings.DEBUG:
    from django.conf.urls.static import static

    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)
