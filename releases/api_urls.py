"""``/api/v1/``: a task's dataset releases."""

from rest_framework.routers import DefaultRouter

from releases import api_views

router = DefaultRouter(trailing_slash=False)
router.include_root_view = False
router.register(r"tasks/(?P<task_code>[-a-zA-Z0-9_]+)/releases", api_views.ReleaseViewSet, basename="release")
urlpatterns = router.urls
