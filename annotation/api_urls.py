"""``/api/v1/``: examples and a task's next context."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from annotation import api_views, t2i_api_views

router = DefaultRouter(trailing_slash=False)
router.include_root_view = False
router.register("examples", api_views.ExampleViewSet, basename="example")
urlpatterns = [
    path("tasks/<slug:task_code>/context", api_views.TaskContextView.as_view(), name="api-task-context"),
    path("tasks/<slug:task_code>/imagine", t2i_api_views.GenerateImagesView.as_view(), name="api-t2i-generate"),
    path("tasks/<slug:task_code>/imagine/judgments", t2i_api_views.JudgeImagesView.as_view(), name="api-t2i-judge"),
    *router.urls,
]
