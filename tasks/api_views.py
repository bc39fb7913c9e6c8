"""``/api/v1/tasks``, a round's contexts and ``/api/v1/datasets``: views parse and render only.

Rules live in ``tasks/services.py`` and ``tasks/access.py`` (what may be read). Rounds with
their counts and vMER, opening and closing them, are ``validation/api_views.py``'s.

The owners' image upload and list (``/api/v1/tasks/{task_code}/images``) is the REST twin of the
console's *Images* page: both call ``tasks.data.images.ingest_images``, so a refused file answers 400
with ``{"code": "invalid_upload", "detail", "field": "files", "errors": {"files": [...]}}`` and
nothing is stored.

A task's audio clips (``/api/v1/tasks/{task_code}/audio``) likewise go through
``tasks.data.audio.ingest_audio``, as the console's *Audio* page does.
"""

import tempfile
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Count
from django.http import JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from dynabench.api import query_bool, query_choice, query_int
from dynabench.parsers import RequestTooLarge
from dynabench.params import whole_number
from dynabench.permissions import IsTaskOwner
from tasks import access, services
from tasks.data import audio, croissant, images, uploads
from tasks.data.importers.contexts import import_contexts
from tasks.data.importers.files import FileSpec, parse_assignments
from tasks.models import Context, Dataset, Round, Upload
from tasks.selectors import can_see_labels
from tasks.serializers import (
    AudioUploadResultSerializer,
    AudioUploadSerializer,
    ContextAudioSerializer,
    ContextImageSerializer,
    ImageUploadResultSerializer,
    ImageUploadSerializer,
    BanSerializer,
    RoleChangeSerializer,
    TaskRoleSerializer,
    TaskSettingsChangeSerializer,
    TaskSettingsSerializer,
    UploadCreateSerializer,
    UploadMappingSerializer,
    UploadSerializer,
    ContextSerializer,
    ContextUploadSerializer,
    DatasetItemSerializer,
    DatasetSerializer,
    ImportResultSerializer,
    TaskSerializer,
)

TASK_CODE = OpenApiParameter("task_code", OpenApiTypes.STR, OpenApiParameter.PATH, description="The task's code, e.g. `sentiment`.")
ROUND_NUMBER = OpenApiParameter("round_number", OpenApiTypes.INT, OpenApiParameter.PATH, description="The round's number (1, 2, ...).")


class TaskScopedMixin:
    """For views under ``/tasks/{task_code}/``: ``get_task()`` (404 when not visible to the caller)."""

    def get_task(self):
        if not hasattr(self, "_task"):
            self._task = get_object_or_404(access.visible_tasks(self.request.user), code=self.kwargs["task_code"])
        return self._task


class RoundScopedMixin(TaskScopedMixin):
    """For views under ``/tasks/{task_code}/rounds/{round_number}/``: ``get_round()``."""

    def get_round(self):
        if not hasattr(self, "_round"):
            self._round = get_object_or_404(Round.objects.select_related("task"), task=self.get_task(), number=self.kwargs["round_number"])
        return self._round


class RoundByIdMixin:
    """For views under ``/rounds/{round_id}/`` (with ``dynabench.permissions.IsTaskOwner``): ``get_round()``
    (404 when there is none) and ``get_task()``, the round's task, which the permission checks."""

    def get_task(self):
        return self.get_round().task

    def get_round(self) -> Round:
        if not hasattr(self, "_round"):
            self._round = get_object_or_404(Round.objects.select_related("task"), pk=self.kwargs["round_id"])
        return self._round


@extend_schema_view(
    list=extend_schema(
        summary="List tasks",
        parameters=[
            OpenApiParameter("kind", OpenApiTypes.STR, enum=["classification", "extractive_qa"]),
            OpenApiParameter("active", OpenApiTypes.BOOL),
            OpenApiParameter("search", OpenApiTypes.STR, description="Part of the code or name."),
        ],
    ),
    retrieve=extend_schema(summary="Get a task with its config and rounds", parameters=[TASK_CODE]),
)
class TaskViewSet(viewsets.ReadOnlyModelViewSet):
    """Tasks: everyone may read the active ones; owners also see their inactive ones."""

    serializer_class = TaskSerializer
    permission_classes = [AllowAny]
    lookup_field = "code"
    lookup_url_kwarg = "task_code"
    lookup_value_regex = r"[-a-zA-Z0-9_]+"

    def get_queryset(self):
        tasks = access.visible_tasks(self.request.user).prefetch_related("rounds").order_by("code")
        if self.action != "list":
            return tasks
        kind = query_choice(self.request, "kind", ["classification", "extractive_qa"])
        if kind:
            tasks = tasks.filter(kind=kind)
        active = query_bool(self.request, "active")
        if active is not None:
            tasks = tasks.filter(active=active)
        search = self.request.query_params.get("search", "").strip()
        if search:
            tasks = tasks.filter(code__icontains=search) | tasks.filter(name__icontains=search)
        return tasks


@extend_schema_view(
    list=extend_schema(
        summary="List a round's contexts (owners)",
        parameters=[TASK_CODE, ROUND_NUMBER, OpenApiParameter("tag", OpenApiTypes.STR), OpenApiParameter("active", OpenApiTypes.BOOL)],
    ),
    create=extend_schema(
        summary="Upload contexts to a round from a JSONL or CSV file (owners)",
        parameters=[TASK_CODE, ROUND_NUMBER],
        request={"multipart/form-data": ContextUploadSerializer},
        responses={201: ImportResultSerializer},
    ),
)
class ContextViewSet(RoundScopedMixin, mixins.ListModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet):
    """A round's contexts, for the task's owners: list them, or upload more.

    Uploads go through the foundation importer (``tasks.data.importers.contexts.import_contexts``):
    all-or-nothing, idempotent by uid, with a line-numbered message for a bad row.
    """

    serializer_class = ContextSerializer
    permission_classes = [IsTaskOwner]
    parser_classes = [MultiPartParser]

    def get_queryset(self):
        contexts = Context.objects.filter(round=self.get_round()).select_related("round").order_by("id")
        tag = self.request.query_params.get("tag")
        if tag:
            contexts = contexts.filter(tag=tag)
        active = query_bool(self.request, "active")
        if active is not None:
            contexts = contexts.filter(active=active)
        return contexts

    def create(self, request, *args, **kwargs):
        serializer = ContextUploadSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        upload = data["file"]
        limit = settings.CONSOLE_UPLOAD_MAX_BYTES
        if upload.size > limit:
            raise RequestTooLarge(f"The file has {upload.size:,} bytes; the limit is {limit:,} bytes.")
        fmt = data.get("format")
        suffix = f".{fmt}" if fmt else Path(upload.name).suffix.lower()
        with tempfile.NamedTemporaryFile(suffix=suffix) as staged:
            for chunk in upload.chunks():
                staged.write(chunk)
            staged.flush()
            spec = FileSpec(
                path=Path(staged.name), format=fmt, mapping=parse_assignments(data["map"], option="map"),
                uid_field=data["uid_field"], uid_from=data["uid_from"], tag_field=data.get("tag_field"),
            )
            result = import_contexts(task=self.get_task(), round_number=self.get_round().number, spec=spec, progress=False)
        body = {**{f: getattr(result, f) for f in ("added", "unchanged", "repeated", "filtered_out", "checksum")}, "summary": result.summary()}
        return Response(ImportResultSerializer(body).data, status=status.HTTP_201_CREATED)


@extend_schema_view(
    list=extend_schema(
        summary="List datasets",
        parameters=[
            OpenApiParameter("task", OpenApiTypes.STR, description="A task code."),
            OpenApiParameter("round", OpenApiTypes.INT, description="A round number (with `task`)."),
            OpenApiParameter("access", OpenApiTypes.STR, enum=["scoring", "standard"]),
            OpenApiParameter("labels", OpenApiTypes.STR, enum=["public", "hidden"], description="Label visibility."),
            OpenApiParameter("split", OpenApiTypes.STR, enum=["train", "dev", "test"]),
        ],
    ),
    retrieve=extend_schema(summary="Get a dataset"),
    items=extend_schema(
        summary="Download a dataset's items (targets only where you may see the labels)",
        description="Items of a hidden dataset come with their inputs and uids only (``target`` and ``metadata`` "
        "null), except to the task's owners and admins. Train and public dev sets come with their targets.",
        responses=DatasetItemSerializer(many=True),
    ),
)
class DatasetViewSet(viewsets.ReadOnlyModelViewSet):
    """Datasets of visible tasks. Items of hidden datasets come without ``target`` or ``metadata``
    unless the reader owns the task (``tasks.selectors.can_see_labels``)."""

    serializer_class = DatasetSerializer
    permission_classes = [AllowAny]

    def get_queryset(self):
        datasets = (
            Dataset.objects.filter(task__in=access.visible_tasks(self.request.user))
            .select_related("task", "round")
            .annotate(n_items=Count("items"))
            .order_by("task__code", "round__number", "name")
        )
        if self.action != "list":
            return datasets
        params = self.request.query_params
        if params.get("task"):
            datasets = datasets.filter(task__code=params["task"])
        number = query_int(self.request, "round", minimum=1)
        if number is not None:
            datasets = datasets.filter(round__number=number)
        wanted_access = query_choice(self.request, "access", ["scoring", "standard"])
        if wanted_access:
            datasets = datasets.filter(access=wanted_access)
        labels = query_choice(self.request, "labels", ["public", "hidden"])
        if labels:
            datasets = datasets.filter(label_visibility=labels)
        split = query_choice(self.request, "split", ["train", "dev", "test"])
        if split:
            datasets = datasets.filter(split=split)
        return datasets

    @action(detail=True, methods=["get"], serializer_class=DatasetItemSerializer)
    def items(self, request, pk=None):
        dataset = self.get_object()
        page = self.paginate_queryset(dataset.items.order_by("id"))
        serializer = DatasetItemSerializer(page, many=True, context={**self.get_serializer_context(), "dataset": dataset})
        return self.get_paginated_response(serializer.data)

    @extend_schema(
        summary="Download a dataset's items as one JSON Lines file (the file its Croissant description names)",
        description="One flat object per item: `uid`, `split`, `tag`, the input fields, then the target fields, which a "
                    "hidden set leaves out unless you own the task.",
        responses={(200, "application/jsonlines"): OpenApiTypes.BINARY},
    )
    @action(detail=True, methods=["get"], url_path="download.jsonl")
    def items_jsonl(self, request, pk=None):
        dataset = self.get_object()
        with_labels = can_see_labels(request.user, dataset)
        response = StreamingHttpResponse(croissant.dataset_lines(dataset, with_labels=with_labels), content_type="application/jsonlines")
        response["Content-Disposition"] = f'attachment; filename="{dataset.name}.jsonl"'
        return response

    @extend_schema(
        summary="Get a dataset's Croissant description (JSON-LD): fields, types, split, licence, citation, sha256, provenance",
        description="Validated by `mlcroissant validate`; `mlcroissant.Dataset(jsonld=<this URL>)` reads its records from "
                    "`download.jsonl`. A hidden set is described without its labels unless you own the task.",
        responses={(200, "application/ld+json"): OpenApiTypes.OBJECT},
    )
    @action(detail=True, methods=["get"], url_path="croissant.json")
    def croissant_json(self, request, pk=None):
        dataset = self.get_object()
        body = croissant.dataset_croissant(
            dataset, with_labels=can_see_labels(request.user, dataset),
            file_url=request.build_absolute_uri(f"/api/v1/datasets/{dataset.pk}/download.jsonl"),
            page_url=request.build_absolute_uri(f"/api/v1/datasets/{dataset.pk}"),
        )
        return JsonResponse(body, content_type="application/ld+json", json_dumps_params={"ensure_ascii": False, "indent": 1})


# --- the owner's console: settings, roles, bans, uploads (owners of the task and admins) ------


class OwnerTaskView(TaskScopedMixin, APIView):
    """Base of the console's API views: ``/tasks/{task_code}/...``, the task's owners only (403)."""

    permission_classes = [IsTaskOwner]

    def person(self, username: str):
        return get_object_or_404(get_user_model(), username=username)


@extend_schema_view(
    get=extend_schema(summary="Read a task's settings (owners)", parameters=[TASK_CODE], responses=TaskSettingsSerializer),
    patch=extend_schema(
        summary="Change a task's settings (owners)", parameters=[TASK_CODE], request=TaskSettingsChangeSerializer,
        responses={200: TaskSettingsSerializer, 409: OpenApiResponse(description="Changed by someone else since `version`.")},
    ),
)
class TaskSettingsView(OwnerTaskView):
    """Name, instructions, labels, validations needed, daily cap and content warning, with the
    version for optimistic concurrency (``tasks.services.update_task_settings``)."""

    def get(self, request, task_code):
        return Response(TaskSettingsSerializer(services.task_settings(self.get_task())).data)

    def patch(self, request, task_code):
        serializer = TaskSettingsChangeSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        version = data.pop("version", None)
        if version is None:
            raise ValidationError({"version": ["Send the version you read (GET this URL), so a concurrent change is not overwritten."]})
        task = services.update_task_settings(task=self.get_task(), acting_user=request.user, version=version, **data)
        return Response(TaskSettingsSerializer(services.task_settings(task)).data)


@extend_schema_view(
    get=extend_schema(summary="People with a role on the task (owners)", parameters=[TASK_CODE], responses=TaskRoleSerializer(many=True)),
    post=extend_schema(summary="Grant a role on the task (owners)", parameters=[TASK_CODE], request=RoleChangeSerializer, responses=TaskRoleSerializer),
    delete=extend_schema(summary="Revoke a role on the task (owners)", parameters=[TASK_CODE], request=RoleChangeSerializer, responses=TaskRoleSerializer),
)
class TaskRolesView(OwnerTaskView):
    """Grant and revoke annotator, validator and owner on the task (``tasks.access``)."""

    def _row(self, task, user):
        roles = access.task_roles_of(task, [user.pk])[user.pk]
        return {"user": user.username, "roles": sorted(roles), "banned": access.is_banned(user, task)}

    def get(self, request, task_code):
        task = self.get_task()
        ids = set(task.owners.values_list("pk", flat=True)) | set(task.role_grants.values_list("user_id", flat=True))
        users = get_user_model().objects.filter(pk__in=ids).order_by("username")
        roles = access.task_roles_of(task, [u.pk for u in users])
        banned = set(task.bans.values_list("user_id", flat=True))
        return Response([{"user": u.username, "roles": sorted(roles[u.pk]), "banned": u.pk in banned} for u in users])

    def _change(self, request, grant: bool):
        serializer = RoleChangeSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        task, user = self.get_task(), self.person(serializer.validated_data["user"])
        change = access.grant_role if grant else access.revoke_role
        change(task=task, user=user, role=serializer.validated_data["role"], acting_user=request.user)
        return Response(self._row(task, user))

    def post(self, request, task_code):
        return self._change(request, grant=True)

    def delete(self, request, task_code):
        return self._change(request, grant=False)


@extend_schema_view(
    post=extend_schema(summary="Ban a user from the task (owners)", parameters=[TASK_CODE], request=BanSerializer, responses=TaskRoleSerializer),
    delete=extend_schema(summary="Lift a ban (owners)", parameters=[TASK_CODE], request=BanSerializer, responses=TaskRoleSerializer),
)
class TaskBansView(OwnerTaskView):
    """Ban a user from the task (their roles there go, their pending examples leave the queue)."""

    def post(self, request, task_code):
        serializer = BanSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        task, user = self.get_task(), self.person(serializer.validated_data["user"])
        access.ban_user(task=task, user=user, acting_user=request.user, reason=serializer.validated_data.get("reason", ""))
        return Response({"user": user.username, "roles": sorted(access.task_roles_of(task, [user.pk])[user.pk]), "banned": True})

    def delete(self, request, task_code):
        serializer = BanSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        task, user = self.get_task(), self.person(serializer.validated_data["user"])
        access.lift_ban(task=task, user=user, acting_user=request.user)
        return Response({"user": user.username, "roles": sorted(access.task_roles_of(task, [user.pk])[user.pk]), "banned": False})


def _upload_body(upload) -> dict:
    return {
        **{f: getattr(upload, f) for f in ("id", "target", "original_name", "format", "size", "rows", "columns", "options",
                                           "mapping", "status", "result", "errors", "error_count", "created_at")},
        "progress": uploads.upload_progress(upload),
    }


@extend_schema_view(
    post=extend_schema(
        summary="Upload a contexts or dataset file (owners)", parameters=[TASK_CODE],
        request={"multipart/form-data": UploadCreateSerializer}, responses={201: UploadSerializer},
    ),
)
class UploadCreateView(OwnerTaskView):
    """Step 1 of an upload: keep the file (``tasks.data.uploads.store_upload``); the answer lists its
    columns and a suggested mapping. Step 2: ``POST .../uploads/{id}/import`` with the mapping."""

    parser_classes = [MultiPartParser]

    def post(self, request, task_code):
        serializer = UploadCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        upload = uploads.store_upload(
            task=self.get_task(), acting_user=request.user, file=data["file"], target=data["target"],
            options={k: data.get(k) for k in ("round", "name", "split", "access", "label_visibility")},
        )
        return Response(UploadSerializer(_upload_body(upload)).data, status=status.HTTP_201_CREATED)


@extend_schema_view(get=extend_schema(summary="An upload's status, progress and outcome (owners)", parameters=[TASK_CODE], responses=UploadSerializer))
class UploadDetailView(OwnerTaskView):
    """An upload of the task: poll it while its import runs."""

    def get(self, request, task_code, upload_id):
        upload = get_object_or_404(Upload, pk=upload_id, task=self.get_task())
        return Response(UploadSerializer(_upload_body(upload)).data)


@extend_schema_view(
    post=extend_schema(
        summary="Import an upload with a column mapping (owners)", parameters=[TASK_CODE], request=UploadMappingSerializer,
        responses={200: UploadSerializer, 202: UploadSerializer, 400: UploadSerializer},
    ),
)
class UploadImportView(OwnerTaskView):
    """Step 2: import with the mapping, all-or-nothing (``tasks.data.uploads.start_import``): 200 with
    the outcome when imported, 400 when the file's rows were refused (status ``failed``, the
    line-numbered problems in ``errors``), or 202 when queued (poll the upload for its outcome)."""

    def post(self, request, task_code, upload_id):
        upload = get_object_or_404(Upload, pk=upload_id, task=self.get_task())
        serializer = UploadMappingSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = uploads.start_import(upload=upload, acting_user=request.user, mapping=serializer.validated_data)
        answer = {Upload.Status.DONE: status.HTTP_200_OK, Upload.Status.FAILED: status.HTTP_400_BAD_REQUEST}
        return Response(UploadSerializer(_upload_body(upload)).data, status=answer.get(upload.status, status.HTTP_202_ACCEPTED))


class _TaskMediaView(OwnerTaskView):
    """A task's stored media for its owners. GET: the latest ``page_size`` records (``?offset=`` pages
    on). POST: ``files`` and ``round`` checked by ``upload_serializer``, then ``ingest`` stores every
    file as a context of the round (all or nothing): 201 with ``added``, ``unchanged`` and the records
    under ``result_key``. Subclasses name the records, the body of one record, and the serializers."""

    parser_classes = [MultiPartParser]
    page_size = 100
    related_name = result_key = ""
    record_body = staticmethod(lambda task, record: {})
    ingest = staticmethod(lambda **kwargs: None)
    record_serializer = upload_serializer = result_serializer = None

    def get(self, request, task_code):
        task = self.get_task()
        offset = whole_number(request.query_params.get("offset", "0")) or 0
        records = getattr(task, self.related_name).all()[offset:offset + self.page_size]
        return Response(self.record_serializer([self.record_body(task, r) for r in records], many=True).data)

    def post(self, request, task_code):
        task = self.get_task()
        serializer = self.upload_serializer(data={"files": request.FILES.getlist("files"), "round": request.data.get("round")})
        serializer.is_valid(raise_exception=True)
        result = self.ingest(task=task, acting_user=request.user, files=serializer.validated_data["files"],
                             round_number=serializer.validated_data["round"])
        body = {"added": result.added, "unchanged": result.unchanged,
                self.result_key: [self.record_body(task, r) for r in getattr(result, self.result_key)]}
        return Response(self.result_serializer(body).data, status=status.HTTP_201_CREATED)


IMAGE_PAGE_SIZE = 100


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
class TaskImagesView(_TaskMediaView):
    """GET: the task's latest ``IMAGE_PAGE_SIZE`` images (``?offset=`` pages on). POST: check every file and
    store each image as a context of ``round`` (``tasks.data.images.ingest_images``): 201 with what was added."""

    page_size = IMAGE_PAGE_SIZE
    related_name = result_key = "images"
    record_body = staticmethod(_image_body)
    ingest = staticmethod(images.ingest_images)
    record_serializer, upload_serializer, result_serializer = ContextImageSerializer, ImageUploadSerializer, ImageUploadResultSerializer


AUDIO_PAGE_SIZE = 100


def clip_body(task, record) -> dict:
    """The API's view of one ``ContextAudio`` (``ContextAudioSerializer``'s fields)."""
    return {
        "sha256": record.sha256, "source_format": record.source_format, "sample_rate": record.sample_rate,
        "channels": record.channels, "duration_s": record.duration_s, "size": record.size,
        "original_name": record.original_name, "url": reverse("tasks:clip", args=[task.code, record.sha256]),
    }


@extend_schema_view(
    get=extend_schema(summary="List a task's audio clips, newest first (owners)", parameters=[TASK_CODE],
                      responses=ContextAudioSerializer(many=True)),
    post=extend_schema(
        summary="Upload audio clips or zips of clips as contexts of a round (owners)", parameters=[TASK_CODE],
        request={"multipart/form-data": AudioUploadSerializer}, responses={201: AudioUploadResultSerializer},
    ),
)
class TaskAudioView(_TaskMediaView):
    """GET: the task's latest ``AUDIO_PAGE_SIZE`` clips (``?offset=`` pages on). POST: check every file and
    store each clip as a context of ``round`` (``tasks.data.audio.ingest_audio``): 201 with what was added."""

    page_size = AUDIO_PAGE_SIZE
    related_name, result_key = "audio_clips", "clips"
    record_body = staticmethod(clip_body)
    ingest = staticmethod(audio.ingest_audio)
    record_serializer, upload_serializer, result_serializer = ContextAudioSerializer, AudioUploadSerializer, AudioUploadResultSerializer
