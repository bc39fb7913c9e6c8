"""``/api/v1/``: models (submissions, status, publish, anonymise) and task leaderboards."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from leaderboard import api_views

router = DefaultRouter(trailing_slash=False)
router.include_root_view = False
router.register("models", api_views.ModelViewSet, basename="model")
urlpatterns = [
    path("tasks/<slug:task_code>/leaderboard", api_views.LeaderboardView.as_view(), name="api-leaderboard"),
    path("tasks/<slug:task_code>/arena", api_views.ArenaView.as_view(), name="api-arena"),
    path("tasks/<slug:task_code>/generative", api_views.GenerativeBoardsView.as_view(), name="api-generative-boards"),
    *router.urls,
]
