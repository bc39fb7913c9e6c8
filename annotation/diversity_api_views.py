"""``GET /api/v1/rounds/{id}/diversity``: a round's diversity report and near-duplicate rule, for the
task's owners (the report itself: ``annotation/diversity/report.py``)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.diversity import rules
from annotation.diversity_models import RoundDiversity
from dynabench.permissions import IsTaskOwner
from tasks.api_views import RoundByIdMixin


class RoundDiversityView(RoundByIdMixin, APIView):
    """The round's near-duplicate rule (``threshold``, ``mode``) and its last diversity report: ``status``
    (``none`` before one was asked for, then queued, running, done or failed with its ``reason``),
    ``computed_at`` and ``figures`` (Vendi with its 95 % bootstrap interval, distinct-n, self-BLEU, per-author
    Vendi, near-duplicate pairs, and the clusters of validated fooling examples: ``cluster``, ``size``,
    ``share``, ``terms``, ``examples``, ``vmer``). Each example's cluster is ``cluster`` on the example
    (``GET /examples/{id}``) and in the round export. Owners of the round's task only (403 otherwise)."""

    permission_classes = [IsAuthenticated, IsTaskOwner]

    @extend_schema(summary="Get a round's diversity report and near-duplicate rule", responses=OpenApiTypes.OBJECT)
    def get(self, request, round_id: int):
        round = self.get_round()
        rule = rules.round_rule(round)
        report = RoundDiversity.objects.filter(round=round).first()
        return Response({
            "round": round.pk, "task": round.task.code, "number": round.number,
            "threshold": rule.threshold, "mode": rule.mode,
            "status": report.status if report else "none", "reason": report.reason if report else "",
            "computed_at": report.computed_at if report else None, "figures": report.figures if report else {},
        })
