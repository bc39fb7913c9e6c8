"""``/api/v1/``: examples, a task's next context, a round's verified examples."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from annotation import api_views

router = DefaultRouter(trailing_slash=False)
router.include_root_view = False
router.register("examples", api_views.ExampleViewSet, basename="example")
router.register(
    r"tasks/(?P<task_code>[-a-zA-Z0-9_]+)/rounds/(?P<round_number>[0-9]+)/examples",
    api_views.RoundExampleViewSet,
    basename="round-example",
)
urlpatterns = [
    path("tasks/<slug:task_code>/context", api_views.TaskContextView.as_view(), name="api-task-context"),
    *router.urls,
]
