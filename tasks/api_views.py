"""``/api/v1/tasks``, rounds, contexts and ``/api/v1/datasets``: views parse and render only.

Rules live in ``tasks/services.py`` (opening a round) and ``tasks/access.py`` (what may be
read); counts come from ``annotation/selectors.py``.
"""

import tempfile
from pathlib import Path

from django.db.models import Count
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import AllowAny
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from annotation.selectors import counts_by_round
from dynabench.api import query_bool, query_choice, query_int
from dynabench.parsers import RequestTooLarge
from dynabench.permissions import IsTaskOwner
from tasks import access, services
from tasks.importers import FileSpec, import_contexts, parse_assignments
from tasks.models import Context, Dataset, Round
from tasks.serializers import (
    ContextSerializer,
    ContextUploadSerializer,
    DatasetItemSerializer,
    DatasetSerializer,
    ImportResultSerializer,
    RoundClosedSerializer,
    RoundCloseSerializer,
    RoundCreateSerializer,
    RoundSerializer,
    TaskSerializer,
)
from validation.services import close_round

TASK_CODE = OpenApiParameter("task_code", OpenApiTypes.STR, OpenApiParameter.PATH, description="The task's code, e.g. `sentiment`.")
MAX_CONTEXT_FILE_BYTES = 64 * 1024 * 1024
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
    list=extend_schema(summary="List a task's rounds with counts and vMER", parameters=[TASK_CODE, OpenApiParameter("status", OpenApiTypes.STR, enum=["open", "closed"])]),
    retrieve=extend_schema(summary="Get a round", parameters=[TASK_CODE, ROUND_NUMBER]),
    create=extend_schema(
        summary="Open the task's next round (owners)",
        parameters=[TASK_CODE],
        request=RoundCreateSerializer,
        responses={201: RoundSerializer},
    ),
    close=extend_schema(
        summary="Close a round and build its train/dev/test datasets (owners)",
        parameters=[TASK_CODE, ROUND_NUMBER],
        request=RoundCloseSerializer,
        responses={200: RoundClosedSerializer},
    ),
)
class RoundViewSet(TaskScopedMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet):
    """A task's rounds. Everyone reads; owners open the next round."""

    serializer_class = RoundSerializer
    lookup_field = "number"
    lookup_url_kwarg = "round_number"
    lookup_value_regex = r"[0-9]+"

    def get_permissions(self):
        if self.action in ("list", "retrieve"):
            return [AllowAny()]
        return [IsTaskOwner()]

    def get_queryset(self):
        rounds = Round.objects.filter(task=self.get_task()).select_related("task").prefetch_related("target_models").order_by("number")
        if self.action == "list":
            wanted = query_choice(self.request, "status", ["open", "closed"])
            if wanted:
                rounds = rounds.filter(status=wanted)
        return rounds

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        context = {**self.get_serializer_context(), "round_counts": counts_by_round(page)}
        return self.get_paginated_response(RoundSerializer(page, many=True, context=context).data)

    def create(self, request, *args, **kwargs):
        serializer = RoundCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        new_round = services.open_round(
            task=self.get_task(), acting_user=request.user, target_model_ids=data["target_models"],
            start=data.get("start"), end=data.get("end"),
        )
        return Response(self.get_serializer(new_round).data, status=status.HTTP_201_CREATED)

    @action(detail=True, methods=["post"])
    def close(self, request, *args, **kwargs):
        serializer = RoundCloseSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        round = self.get_object()
        datasets = close_round(round=round, acting_user=request.user, ratios=data.get("ratios"), seed=data.get("seed"))
        round.refresh_from_db()
        annotated = Dataset.objects.filter(pk__in=[d.pk for d in datasets]).select_related("task", "round").annotate(item_count=Count("items"))
        body = {
            "round": self.get_serializer(round).data,
            "datasets": DatasetSerializer(annotated.order_by("pk"), many=True, context=self.get_serializer_context()).data,
        }
        return Response(body)


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

    Uploads go through the foundation importer (``tasks.importers.import_contexts``):
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
        if upload.size > MAX_CONTEXT_FILE_BYTES:
            raise RequestTooLarge(f"The file has {upload.size} bytes; the limit is {MAX_CONTEXT_FILE_BYTES} bytes.")
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
            OpenApiParameter("access", OpenApiTypes.STR, enum=["scoring", "standard", "hidden"]),
            OpenApiParameter("split", OpenApiTypes.STR, enum=["train", "dev", "test"]),
        ],
    ),
    retrieve=extend_schema(summary="Get a dataset"),
    items=extend_schema(summary="Download a dataset's items (no labels for hidden datasets)", responses=DatasetItemSerializer(many=True)),
)
class DatasetViewSet(viewsets.ReadOnlyModelViewSet):
    """Datasets of visible tasks. Items of hidden datasets come without ``target`` or ``metadata``."""

    serializer_class = DatasetSerializer
    permission_classes = [AllowAny]

    def get_queryset(self):
        datasets = (
            Dataset.objects.filter(task__in=access.visible_tasks(self.request.user))
            .select_related("task", "round")
            .annotate(item_count=Count("items"))
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
        wanted_access = query_choice(self.request, "access", ["scoring", "standard", "hidden"])
        if wanted_access:
            datasets = datasets.filter(access=wanted_access)
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
