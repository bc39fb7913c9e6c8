"""``/api/v1/``: validations and the next example to validate, a task's rounds (counts and vMER;
open, close), a round's validated examples, and ``me``."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from validation import api_views
from validation.judge_api_views import RoundJudgeView

router = DefaultRouter(trailing_slash=False)
router.include_root_view = False
router.register("validations", api_views.ValidationViewSet, basename="validation")
router.register(r"tasks/(?P<task_code>[-a-zA-Z0-9_]+)/rounds", api_views.RoundViewSet, basename="round")
router.register(
    r"tasks/(?P<task_code>[-a-zA-Z0-9_]+)/rounds/(?P<round_number>[0-9]+)/examples",
    api_views.RoundExampleViewSet,
    basename="round-example",
)
urlpatterns = [
    path("me", api_views.MeView.as_view(), name="api-me"),
    path("rounds/<int:round_id>/judge", RoundJudgeView.as_view(), name="api-round-judge"),
    *router.urls,
]
