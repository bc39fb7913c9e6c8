"""``/api/v1/``: one DRF router; each app registers its viewsets in ``<app>/api_urls.py``."""

from django.urls import include, path

urlpatterns = [
    path("", include("tasks.api_urls")),
    path("", include("annotation.api_urls")),
    path("", include("validation.api_urls")),
    path("", include("leaderboard.api_urls")),
]
