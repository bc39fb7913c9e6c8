"""Top-level URLs: each app owns its pages (``<app>/urls.py``) and its API (``<app>/api_urls.py``)."""

from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from dynabench import accounts, health

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", health.healthz, name="healthz"),
    path("accounts/signup/", accounts.signup, name="signup"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("django-rq/", include("django_rq.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/v1/", include("dynabench.api_urls")),
    path("", include("tasks.urls")),
    path("", include("annotation.urls")),
    path("", include("validation.urls")),
    path("", include("leaderboard.urls")),
]

if settings.DEBUG:
    from django.conf.urls.static import static

    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)
