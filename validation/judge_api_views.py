"""``GET /api/v1/rounds/{id}/judge``: a round's AI validators measured against people
(``validation/judge_selectors.py:judge_report``), for the task's owners."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from dynabench.permissions import IsTaskOwner
from tasks.api_views import RoundByIdMixin
from validation.judge_selectors import judge_report


class RoundJudgeView(RoundByIdMixin, APIView):
    """The round's judge figures: per AI validator and per person, accuracy and Cohen's κ (overall and per
    label, 95 % bootstrap intervals) against the consensus and against gold, the confusion matrix, and the
    judge's disagreements with its reasons. Owners of the round's task only (403 otherwise)."""

    permission_classes = [IsAuthenticated, IsTaskOwner]

    @extend_schema(summary="Get a round's AI validator agreement with people", responses=OpenApiTypes.OBJECT)
    def get(self, request, round_id: int):
        return Response(judge_report(self.get_round()))
