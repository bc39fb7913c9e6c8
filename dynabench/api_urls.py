"""``/api/v1/``: the token endpoint here; each app registers its viewsets in ``<app>/api_urls.py``."""

from django.urls import include, path, re_path

from dynabench import api_views

urlpatterns = [
    path("auth/token", api_views.TokenView.as_view(), name="api-token"),
    path("", include("tasks.api_urls")),
    path("", include("annotation.api_urls")),
    path("", include("validation.api_urls")),
    path("", include("console.api_urls")),
    path("", include("leaderboard.api_urls")),
    path("", include("releases.api_urls")),
    re_path(r"", api_views.not_found),
]
