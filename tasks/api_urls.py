"""``/api/v1/``: tasks, a round's contexts, datasets, and the owner's console (settings, roles,
bans, uploads, images) (rounds themselves: ``validation/api_urls.py``)."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from tasks import api_views

router = DefaultRouter(trailing_slash=False)
router.include_root_view = False
router.register("tasks", api_views.TaskViewSet, basename="task")
router.register(
    r"tasks/(?P<task_code>[-a-zA-Z0-9_]+)/rounds/(?P<round_number>[0-9]+)/contexts", api_views.ContextViewSet, basename="context"
)
router.register("datasets", api_views.DatasetViewSet, basename="dataset")
TASK = "tasks/<slug:task_code>"
urlpatterns = [
    path(f"{TASK}/settings", api_views.TaskSettingsView.as_view(), name="task-settings"),
    path(f"{TASK}/roles", api_views.TaskRolesView.as_view(), name="task-roles"),
    path(f"{TASK}/bans", api_views.TaskBansView.as_view(), name="task-bans"),
    path(f"{TASK}/uploads", api_views.UploadCreateView.as_view(), name="task-uploads"),
    path(f"{TASK}/uploads/<int:upload_id>", api_views.UploadDetailView.as_view(), name="task-upload"),
    path(f"{TASK}/uploads/<int:upload_id>/import", api_views.UploadImportView.as_view(), name="task-upload-import"),
    path(f"{TASK}/images", api_views.TaskImagesView.as_view(), name="task-images"),
    path(f"{TASK}/audio", api_views.TaskAudioView.as_view(), name="task-audio"),
    *router.urls,
]
