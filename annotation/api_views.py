"""``/api/v1/examples`` and ``/api/v1/tasks/{code}/context``: write examples against the model in the loop.

Every rule is in annotation's service modules (``annotation/contexts.py``: ``choose_context``;
``annotation/services.py``: ``create_example``, ``retract_example``, ``flag_example``,
``add_explanations``); what may be read is in ``tasks/access.py``. Views parse input, call one service, render the result.
"""

from adrf.viewsets import GenericViewSet as AsyncGenericViewSet
from asgiref.sync import sync_to_async
from django.db.models import Q
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import contexts, loop_choice, services
from annotation.error_codes import AnnotationErrorCode
from annotation.models import Example, ValidationState
from annotation.serializers import (
    ChosenContextSerializer,
    ExampleCreateSerializer,
    ExampleSerializer,
    ExplanationsSerializer,
    FlagSerializer,
)
from dynabench import idempotency
from dynabench.api import query_bool, query_choice, query_int
from dynabench.errors import RuleError
from dynabench.permissions import HasRole
from dynabench.schema import IDEMPOTENCY_KEY, ErrorSerializer
from tasks import access
from tasks.api_views import TASK_CODE, TaskScopedMixin
from tasks.models import Context

MODEL_ERRORS = {
    409: OpenApiResponse(ErrorSerializer, description="The round has no model in the loop yet."),
    503: OpenApiResponse(ErrorSerializer, description="The model in the loop failed to answer; nothing was saved."),
}


class TaskContextView(TaskScopedMixin, APIView):
    """A context of the task's current round to write against, chosen by the task's strategy."""

    permission_classes = [HasRole("annotator")]

    @extend_schema(
        summary="Get a context to write against (annotators)",
        parameters=[TASK_CODE, OpenApiParameter("tag", OpenApiTypes.STR, description="Only contexts with this tag.")],
        responses={200: ChosenContextSerializer, **MODEL_ERRORS},
    )
    def get(self, request, task_code):
        task = self.get_task()
        round = task.current_round()
        if round is None:
            raise RuleError(AnnotationErrorCode.NO_ROUND, f"{task.name} has no round yet.")
        loop_choice.model_in_loop(round)
        context = contexts.choose_context(round=round, tag=request.query_params.get("tag") or None)
        return Response(ChosenContextSerializer(context).data)


@extend_schema_view(
    list=extend_schema(
        summary="List my examples",
        parameters=[
            OpenApiParameter("task", OpenApiTypes.STR, description="A task code."),
            OpenApiParameter("round", OpenApiTypes.INT, description="A round number (with `task`)."),
            OpenApiParameter("model_wrong", OpenApiTypes.BOOL),
            OpenApiParameter("validation_state", OpenApiTypes.STR, enum=ValidationState.values),
            OpenApiParameter("retracted", OpenApiTypes.BOOL),
        ],
    ),
    retrieve=extend_schema(summary="Get an example (its author, the task's owners)"),
    create=extend_schema(
        summary="Write an example; the model in the loop answers at once (annotators)",
        description="Send a one-time `Idempotency-Key` header (e.g. a UUID) to make retries safe: a repeat with the "
        "same key returns the first example (200, `Idempotent-Replayed: true`) and writes nothing.",
        parameters=[IDEMPOTENCY_KEY],
        request=ExampleCreateSerializer,
        responses={201: ExampleSerializer, 200: OpenApiResponse(ExampleSerializer, description="A repeat of an earlier key."), **MODEL_ERRORS},
    ),
    retract=extend_schema(summary="Retract my example", request=None, responses=ExampleSerializer),
    flag=extend_schema(summary="Flag my example with a reason", request=FlagSerializer, responses=ExampleSerializer),
    explanations=extend_schema(summary="Explain my example", request=ExplanationsSerializer, responses=ExampleSerializer),
)
class ExampleViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, AsyncGenericViewSet):
    """My examples; an example is visible to its author and to the owners of its task (404 for anyone else).

    An async viewset (adrf): ``create`` awaits the model in the loop without holding a thread (the
    other actions are sync and run on the request's thread)."""

    serializer_class = ExampleSerializer
    permission_classes = [IsAuthenticated]
    throttle_scopes = {"create": "examples"}

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # drf-spectacular reading the types
            return Example.objects.none()
        user = self.request.user
        examples = Example.objects.select_related("round__task", "transfer", "diversity").order_by("-created_at", "-id")
        if self.action == "list":
            return self._filter(examples.filter(author=user))
        if user.is_superuser:
            return examples
        return examples.filter(Q(author=user) | Q(round__task__owners=user)).distinct()

    def _filter(self, examples):
        params = self.request.query_params
        if params.get("task"):
            examples = examples.filter(round__task__code=params["task"])
        number = query_int(self.request, "round", minimum=1)
        if number is not None:
            examples = examples.filter(round__number=number)
        for name in ("model_wrong", "retracted"):
            value = query_bool(self.request, name)
            if value is not None:
                examples = examples.filter(**{name: value})
        state = query_choice(self.request, "validation_state", ValidationState.values)
        if state:
            examples = examples.filter(validation_state=state)
        return examples

    async def create(self, request, *args, **kwargs):
        serializer = ExampleCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        context = await sync_to_async(self._writable_context)(data)
        example = await services.acreate_example(
            user=request.user, context=context, input=data["input"], target=data["target"],
            tag=data.get("tag", ""), time_spent=data.get("time_spent"), metadata=data.get("metadata"),
            submission_key=idempotency.key_from_request(request),
        )
        body = await sync_to_async(lambda: ExampleSerializer(example).data)()
        if example.replayed:
            return Response(body, status=status.HTTP_200_OK, headers={idempotency.REPLAYED_HEADER: "true"})
        return Response(body, status=status.HTTP_201_CREATED)

    def _writable_context(self, data: dict) -> Context:
        """The context of a new example, if the caller may see its task (a 400 naming it otherwise)."""
        context = (
            Context.objects.select_related("round__task")
            .filter(pk=data["context"], round__task__in=access.visible_tasks(self.request.user))
            .first()
        )
        if context is None:
            raise ValidationError({"context": [f"No context with id {data['context']}."]})
        if data.get("task") and data["task"] != context.round.task.code:
            raise ValidationError({"context": [f"Context {context.pk} belongs to task {context.round.task.code}, not {data['task']}."]})
        return context

    @action(detail=True, methods=["post"])
    def retract(self, request, pk=None):
        example = services.retract_example(example=self.get_object(), user=request.user)
        return Response(ExampleSerializer(example).data)

    @action(detail=True, methods=["post"])
    def flag(self, request, pk=None):
        serializer = FlagSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        example = services.flag_example(example=self.get_object(), user=request.user, reason=serializer.validated_data["reason"])
        return Response(ExampleSerializer(example).data)

    @action(detail=True, methods=["post"])
    def explanations(self, request, pk=None):
        serializer = ExplanationsSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        example = services.add_explanations(
            example=self.get_object(), user=request.user, explanations=serializer.validated_data["explanations"]
        )
        return Response(ExampleSerializer(example).data)
