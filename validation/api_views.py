"""``/api/v1/validations`` (validators' verdicts and the next example to validate), a task's
rounds (counts and vMER; open, close), a round's validated examples, and ``/api/v1/me``.

Rules are ``validation/services.py``'s (``record_validation``), ``validation/queue.py``'s
(``next_example_for``), ``validation/round_close.py``'s (``close_round``), ``tasks/services.py``'s
(``open_round``) and the selectors'; views parse input, call one service and render its result.
"""

from django.db.models import Count
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny, BasePermission, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import qualification
from annotation.error_codes import AnnotationErrorCode
from annotation.models import Example
from annotation.selectors import author_counts, counts_by_round
from dynabench import idempotency
from dynabench.api import query_choice, query_float, query_int
from dynabench.errors import NotAllowed, RuleError
from dynabench.permissions import IsTaskOwner
from dynabench.roles import ROLES, has_role
from dynabench.schema import IDEMPOTENCY_KEY
from tasks import access
from tasks import services as task_services
from tasks.api_views import ROUND_NUMBER, TASK_CODE, RoundScopedMixin, TaskScopedMixin
from tasks.models import Dataset, Round, Task
from tasks.serializers import DatasetSerializer
from validation import export, queue, round_close, selectors, services
from validation.models import Validation
from validation.serializers import (
    ExampleForReviewSerializer,
    MeSerializer,
    RoundClosedSerializer,
    RoundClosePreviewSerializer,
    RoundCloseSerializer,
    RoundCreateSerializer,
    RoundSerializer,
    ValidatedExampleSerializer,
    ValidationCreateSerializer,
    ValidationSerializer,
)


@extend_schema_view(
    list=extend_schema(
        summary="List my validations",
        parameters=[
            OpenApiParameter("task", OpenApiTypes.STR, description="A task code."),
            OpenApiParameter("label", OpenApiTypes.STR, enum=Validation.Label.values),
        ],
    ),
    create=extend_schema(
        summary="Validate an example (validators; owners in owner mode)", parameters=[IDEMPOTENCY_KEY],
        request=ValidationCreateSerializer,
        responses={201: ValidationSerializer, 200: OpenApiResponse(ValidationSerializer, description="A repeat of an earlier Idempotency-Key.")},
    ),
    next=extend_schema(
        summary="Lease the next example to validate (validators and the task's owners)",
        parameters=[OpenApiParameter("task", OpenApiTypes.STR, required=True, description="A task code.")],
        responses={200: ExampleForReviewSerializer, 204: OpenApiResponse(description="Nothing left to validate in the current round.")},
    ),
)
class ValidationViewSet(mixins.ListModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet):
    """My validations, a new verdict, and the next example from the review queue."""

    serializer_class = ValidationSerializer
    permission_classes = [IsAuthenticated]
    throttle_scopes = {"create": "validations"}

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # drf-spectacular reading the types
            return Validation.objects.none()
        validations = Validation.objects.filter(validator=self.request.user).select_related("example__round__task").order_by("-created_at", "-id")
        params = self.request.query_params
        if params.get("task"):
            validations = validations.filter(example__round__task__code=params["task"])
        label = query_choice(self.request, "label", Validation.Label.values)
        if label:
            validations = validations.filter(label=label)
        return validations

    def create(self, request, *args, **kwargs):
        serializer = ValidationCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        example = (
            Example.objects.select_related("round__task")
            .filter(pk=data["example"], round__task__in=access.visible_tasks(request.user))
            .first()
        )
        if example is None:
            raise ValidationError({"example": [f"No example with id {data['example']}."]})
        validation = services.record_validation(
            example=example, validator=request.user, label=data["label"], mode=data["mode"],
            metadata=data["metadata"], expected_state=data.get("expected_state"),
            submission_key=idempotency.key_from_request(request),
        )
        # record_validation leaves ``validation.example`` as it now stands (a gold item as the
        # validator sees it): no re-read from the database.
        if validation.replayed:
            return Response(ValidationSerializer(validation).data, status=status.HTTP_200_OK, headers={idempotency.REPLAYED_HEADER: "true"})
        return Response(ValidationSerializer(validation).data, status=status.HTTP_201_CREATED)

    @action(detail=False, methods=["get"])
    def next(self, request):
        code = request.query_params.get("task")
        if not code:
            raise ValidationError({"task": ["Give the task's code, e.g. ?task=sentiment."]})
        task = get_object_or_404(access.visible_tasks(request.user), code=code)
        if not access.has_task_role(request.user, task, "validator"):
            raise NotAllowed("not_validator", "You need the validator role to validate examples; ask a task owner.")
        qualification.require_qualified(user=request.user, task=task)
        round = task.current_round()
        if round is None:
            raise RuleError(AnnotationErrorCode.NO_ROUND, f"{task.name} has no round yet.")
        example = queue.next_example_for(validator=request.user, round=round)
        if example is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        # As handed out (a gold item presented as pending): never re-read from the database.
        example.round = round
        return Response(ExampleForReviewSerializer(example, context=self.get_serializer_context()).data)


@extend_schema_view(
    list=extend_schema(summary="List a task's rounds with counts and vMER", parameters=[TASK_CODE, OpenApiParameter("status", OpenApiTypes.STR, enum=["open", "closed"])]),
    retrieve=extend_schema(summary="Get a round", parameters=[TASK_CODE, ROUND_NUMBER]),
    create=extend_schema(
        summary="Open the task's next round (owners)",
        parameters=[TASK_CODE],
        request=RoundCreateSerializer,
        responses={201: RoundSerializer},
    ),
    close_preview=extend_schema(
        summary="Preview closing a round: validated examples per split, models re-scored, problems (owners)",
        parameters=[TASK_CODE, ROUND_NUMBER, *[OpenApiParameter(s, OpenApiTypes.NUMBER) for s in ("train", "dev", "test")],
                    OpenApiParameter("seed", OpenApiTypes.INT),
                    OpenApiParameter("merge_small", OpenApiTypes.BOOL, description="Preview merging a dev or test split below the task's minimum.")],
        responses={200: RoundClosePreviewSerializer},
    ),
    close=extend_schema(
        summary="Close a round and build its train/dev/test datasets (owners); every model is then scored on them",
        description="Refused with `empty_split` when the dev or test split would be empty. Closing a closed round "
        "changes nothing and returns its datasets. The test and dev sets' labels are hidden.",
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
        new_round = task_services.open_round(
            task=self.get_task(), acting_user=request.user, target_model_ids=data["target_models"],
            start=data.get("start"), end=data.get("end"), loop_rule=data["loop_rule"],
            without_model=data["without_model"], contexts_from=data.get("contexts_from"),
        )
        return Response(self.get_serializer(new_round).data, status=status.HTTP_201_CREATED)

    @action(detail=True, methods=["get"], url_path="close/preview")
    def close_preview(self, request, *args, **kwargs):
        round = self.get_object()
        values = {s: query_float(request, s) for s in ("train", "dev", "test")}
        ratios = None if all(v is None for v in values.values()) else {s: v or 0.0 for s, v in values.items()}
        preview = round_close.preview_round_close(
            round, ratios=ratios, seed=query_int(request, "seed"), merge_small=request.query_params.get("merge_small") in ("1", "true"),
        )
        return Response(RoundClosePreviewSerializer(preview.as_dict()).data)

    @action(detail=True, methods=["post"])
    def close(self, request, *args, **kwargs):
        serializer = RoundCloseSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        round = self.get_object()
        datasets = round_close.close_round(
            round=round, acting_user=request.user, ratios=data.get("ratios"), seed=data.get("seed"),
            open_next=data["open_next"], next_loop=data["next_loop"], merge_small=data["merge_small"],
        )
        round.refresh_from_db()
        annotated = Dataset.objects.filter(pk__in=[d.pk for d in datasets]).select_related("task", "round").annotate(n_items=Count("items"))
        body = {
            "round": self.get_serializer(round).data,
            "datasets": DatasetSerializer(annotated.order_by("pk"), many=True, context=self.get_serializer_context()).data,
        }
        return Response(body)


class CanDownloadRoundExamples(BasePermission):
    message = "This round is still open: its examples can be downloaded once it closes (task owners may download them now)."

    def has_permission(self, request, view):
        return access.can_download_round_examples(request.user, view.get_round())


@extend_schema_view(
    list=extend_schema(
        summary="Download a round's verified examples (owners; everyone once the round is closed)",
        parameters=[TASK_CODE, ROUND_NUMBER, OpenApiParameter("tag", OpenApiTypes.STR)],
    ),
)
class RoundExampleViewSet(RoundScopedMixin, mixins.ListModelMixin, viewsets.GenericViewSet):
    """A round's verified-correct examples as exported, user ids anonymised; hidden splits left out."""

    serializer_class = ValidatedExampleSerializer
    permission_classes = [AllowAny, CanDownloadRoundExamples]

    def get_queryset(self):
        examples = selectors.downloadable_examples(self.get_round())
        tag = self.request.query_params.get("tag")
        return examples.filter(tag=tag) if tag else examples

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        rows = list(export.export_rows(Example.objects.filter(pk__in=[e.pk for e in page])))
        return self.get_paginated_response(ValidatedExampleSerializer(rows, many=True).data)


def _counts(counts) -> dict:
    return {
        "collected": counts.collected, "fooled": counts.fooled, "verified_fooled": counts.verified_fooled,
        "vmer": counts.vmer, "mer": counts.mer,
    }


class MeView(APIView):
    """The caller's account, roles, owned tasks and statistics (examples, fooled, verified fooled, vMER)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(summary="Get me and my statistics", responses=MeSerializer)
    def get(self, request):
        user = request.user
        tasks = Task.objects.filter(rounds__examples__author=user).distinct().order_by("code")
        body = {
            "id": user.pk,
            "username": user.get_username(),
            "email": user.email,
            "roles": [role for role in ROLES if has_role(user, role)],
            "is_admin": user.is_superuser,
            "owned_tasks": list(user.owned_tasks.order_by("code").values_list("code", flat=True)),
            # The author's own figures leave out their examples in hidden splits (annotation.selectors.author_counts).
            "examples": _counts(author_counts(user)),
            "examples_by_task": [
                {"task": t.code, **_counts(author_counts(user, task=t))} for t in tasks
            ],
            "validations": Validation.objects.filter(validator=user).count(),
        }
        return Response(MeSerializer(body).data)


