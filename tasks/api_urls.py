"""``/api/v1/``: tasks, rounds, contexts, datasets."""

from rest_framework.routers import DefaultRouter

from tasks import api_views

router = DefaultRouter(trailing_slash=False)
router.include_root_view = False
router.register("tasks", api_views.TaskViewSet, basename="task")
router.register(r"tasks/(?P<task_code>[-a-zA-Z0-9_]+)/rounds", api_views.RoundViewSet, basename="round")
router.register(
    r"tasks/(?P<task_code>[-a-zA-Z0-9_]+)/rounds/(?P<round_number>[0-9]+)/contexts", api_views.ContextViewSet, basename="context"
)
router.register("datasets", api_views.DatasetViewSet, basename="dataset")
urlpatterns = router.urls
