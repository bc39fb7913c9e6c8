"""``/api/v1/validations``: validators' verdicts and the next example to validate.

Rules are ``validation/services.py``'s (``record_validation``, ``next_example_for``); views
parse input, call one service and render its result.
"""

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from annotation.error_codes import AnnotationErrorCode
from annotation.models import Example
from dynabench.errors import NotAllowed, RuleError
from dynabench.roles import has_role
from tasks import access
from validation import services
from validation.models import Validation
from validation.serializers import ExampleForReviewSerializer, ValidationCreateSerializer, ValidationSerializer


@extend_schema_view(
    list=extend_schema(
        summary="List my validations",
        parameters=[
            OpenApiParameter("task", OpenApiTypes.STR, description="A task code."),
            OpenApiParameter("label", OpenApiTypes.STR, enum=Validation.Label.values),
        ],
    ),
    create=extend_schema(summary="Validate an example (validators; owners in owner mode)", request=ValidationCreateSerializer, responses={201: ValidationSerializer}),
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
        if params.get("label"):
            if params["label"] not in Validation.Label.values:
                raise ValidationError({"label": [f"Must be one of {', '.join(Validation.Label.values)}."]})
            validations = validations.filter(label=params["label"])
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
        )
        validation.example.refresh_from_db()
        return Response(ValidationSerializer(validation).data, status=status.HTTP_201_CREATED)

    @action(detail=False, methods=["get"])
    def next(self, request):
        code = request.query_params.get("task")
        if not code:
            raise ValidationError({"task": ["Give the task's code, e.g. ?task=sentiment."]})
        task = get_object_or_404(access.visible_tasks(request.user), code=code)
        if not (task.is_owner(request.user) or has_role(request.user, "validator")):
            raise NotAllowed("not_validator", "You need the validator role to validate examples; ask a task owner.")
        round = task.current_round()
        if round is None:
            raise RuleError(AnnotationErrorCode.NO_ROUND, f"{task.name} has no round yet.")
        example = services.next_example_for(validator=request.user, round=round)
        if example is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        example = Example.objects.select_related("round__task", "context").get(pk=example.pk)
        return Response(ExampleForReviewSerializer(example, context=self.get_serializer_context()).data)
