"""``GET /api/v1/rounds/{id}/judge``: a round's AI validators measured against people
(``validation/judge_selectors.py:judge_report``), for the task's owners."""

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from dynabench.permissions import IsTaskOwner
from tasks.models import Round
from validation.judge_selectors import judge_report


class RoundJudgeView(APIView):
    """The round's judge figures: per AI validator and per person, accuracy and Cohen's κ (overall and per
    label, 95 % bootstrap intervals) against the consensus and against gold, the confusion matrix, and the
    judge's disagreements with its reasons. Owners of the round's task only (403 otherwise)."""

    permission_classes = [IsAuthenticated, IsTaskOwner]

    def get_task(self):
        return self.get_round().task

    def get_round(self) -> Round:
        if not hasattr(self, "_round"):
            self._round = get_object_or_404(Round.objects.select_related("task"), pk=self.kwargs["round_id"])
        return self._round

    @extend_schema(summary="Get a round's AI validator agreement with people", responses=OpenApiTypes.OBJECT)
    def get(self, request, round_id: int):
        return Response(judge_report(self.get_round()))
