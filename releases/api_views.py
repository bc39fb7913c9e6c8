"""``/api/v1/tasks/{task_code}/releases``: a task's published releases, and one by version."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, viewsets
from rest_framework.permissions import AllowAny

from releases.selectors import published_releases
from releases.serializers import ReleaseSerializer
from tasks.api_views import TASK_CODE, TaskScopedMixin

VERSION = OpenApiParameter("version", OpenApiTypes.STR, OpenApiParameter.PATH, description="The release's version, e.g. `1.1.0`.")


@extend_schema_view(
    list=extend_schema(summary="List a task's dataset releases, newest first", parameters=[TASK_CODE]),
    retrieve=extend_schema(summary="Get a dataset release with its files and checksums", parameters=[TASK_CODE, VERSION]),
)
class ReleaseViewSet(TaskScopedMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Published releases of a task (anyone may read them: they hold public data only)."""

    serializer_class = ReleaseSerializer
    permission_classes = [AllowAny]
    lookup_field = "version"
    lookup_value_regex = r"[0-9]+\.[0-9]+\.[0-9]+"

    def get_queryset(self):
        return published_releases(self.get_task()).select_related("task")
