"""``/api/v1/tasks/{task_code}/images``: the owners' image upload and list, the REST twin of the
console's *Images* page (``console/image_views.py``). Both call ``tasks.images.ingest_images``, so
the checks, the all-or-nothing rule and the messages are the same: a refused file answers 400 with
``{"code": "invalid_upload", "detail", "field": "files", "errors": {"files": [reason naming the file]}}``
and nothing is stored."""

from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from dynabench.params import whole_number
from tasks import images
from tasks.api_views import TASK_CODE, OwnerTaskView
from tasks.serializers import ContextImageSerializer, ImageUploadResultSerializer, ImageUploadSerializer

PAGE_SIZE = 100


def _image_body(task, record) -> dict:
    return {
        "sha256": record.sha256, "ext": record.ext, "width": record.width, "height": record.height, "size": record.size,
        "original_name": record.original_name,
        "url": reverse("tasks:image", args=[task.code, record.sha256]),
        "thumbnail_url": reverse("tasks:image_thumb", args=[task.code, record.sha256]),
    }


@extend_schema_view(
    get=extend_schema(summary="List a task's images, newest first (owners)", parameters=[TASK_CODE],
                      responses=ContextImageSerializer(many=True)),
    post=extend_schema(
        summary="Upload images or zips of images as contexts of a round (owners)", parameters=[TASK_CODE],
        request={"multipart/form-data": ImageUploadSerializer}, responses={201: ImageUploadResultSerializer},
    ),
)
class TaskImagesView(OwnerTaskView):
    """GET: the task's latest ``PAGE_SIZE`` images (``?offset=`` pages on). POST: check every file and
    store each image as a context of ``round`` (``tasks.images.ingest_images``): 201 with what was added."""

    parser_classes = [MultiPartParser]

    def get(self, request, task_code):
        task = self.get_task()
        offset = whole_number(request.query_params.get("offset", "0")) or 0
        records = task.images.all()[offset:offset + PAGE_SIZE]
        return Response(ContextImageSerializer([_image_body(task, r) for r in records], many=True).data)

    def post(self, request, task_code):
        task = self.get_task()
        serializer = ImageUploadSerializer(data={"files": request.FILES.getlist("files"), "round": request.data.get("round")})
        serializer.is_valid(raise_exception=True)
        result = images.ingest_images(
            task=task, acting_user=request.user, files=serializer.validated_data["files"],
            round_number=serializer.validated_data["round"],
        )
        body = {"added": result.added, "unchanged": result.unchanged, "images": [_image_body(task, r) for r in result.images]}
        return Response(ImageUploadResultSerializer(body).data, status=status.HTTP_201_CREATED)
