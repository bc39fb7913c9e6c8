"""``/api/v1/``: the console's read models as data, for task owners: a round's dashboard and a
task's people (the same selectors as the console pages, ``console/selectors.py``)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from console import selectors
from dynabench.params import whole_number
from validation import image_judgments
from console.serializers import PersonStatsSerializer, RoundDashboardSerializer
from dynabench.permissions import IsTaskOwner
from tasks import access
from tasks.api_views import ROUND_NUMBER, TASK_CODE, RoundScopedMixin, TaskScopedMixin


@extend_schema(summary="A round's dashboard (owners)", parameters=[TASK_CODE, ROUND_NUMBER], responses=RoundDashboardSerializer)
class RoundDashboardView(RoundScopedMixin, APIView):
    """The owner's round dashboard as data (``console.selectors.round_dashboard``)."""

    permission_classes = [IsTaskOwner]

    def get(self, request, task_code, round_number):
        round = self.get_round()
        board = selectors.round_dashboard(round)
        counts, agreement = board.stats.counts, board.stats.agreement
        body = {
            "round": round.number, "collected": counts.collected, "fooled": counts.fooled,
            "verified_fooled": counts.verified_fooled, "vmer": counts.vmer,
            "per_hour": [vars(b) for b in board.per_hour],
            "per_model": [{**vars(m), "fooling_rate": m.fooling_rate, "vmer": m.vmer} for m in board.per_model],
            "queue_depth": board.queue_depth, "oldest_pending": board.oldest_pending,
            "fleiss_kappa": agreement.fleiss_kappa if agreement else None,
            "krippendorff_alpha": agreement.krippendorff_alpha if agreement else None,
            "flagged_count": board.flagged_count, "flagged_ids": [e.pk for e in board.flagged],
            "unused_contexts": board.unused_contexts, "contexts": board.contexts,
            "figures_as_of": board.figures_as_of, "figures_stale": board.figures_stale,
        }
        return Response(RoundDashboardSerializer(body).data)

@extend_schema(
    summary="The task's people and their records (owners)",
    parameters=[TASK_CODE, OpenApiParameter("search", OpenApiTypes.STR, description="Part of a username or email: any user.")],
    responses=PersonStatsSerializer(many=True),
)
class TaskPeopleView(TaskScopedMixin, APIView):
    """Each person's roles, examples, fooling rate, vMER, validation accuracy against consensus and
    last activity on the task; ``?search=`` finds any user (to grant a role)."""

    permission_classes = [IsTaskOwner]

    def get(self, request, task_code):
        task = self.get_task()
        people = selectors.task_people(task, query=(request.query_params.get("search") or "").strip()[:150])
        ids = [p.pk for p in people]
        stats, roles = selectors.people_stats(task, ids), access.task_roles_of(task, ids)
        banned = set(task.bans.filter(user_id__in=ids).values_list("user_id", flat=True))
        rows = [
            {"user": p.username, "roles": sorted(roles[p.pk]), "banned": p.pk in banned, "examples": stats[p.pk].examples,
             "fooling_rate": stats[p.pk].fooling_rate, "vmer": stats[p.pk].vmer, "validations": stats[p.pk].validations,
             "validation_accuracy": stats[p.pk].validation_accuracy, "last_active": stats[p.pk].last_active}
            for p in people
        ]
        return Response(PersonStatsSerializer(rows, many=True).data)


@extend_schema(
    summary="A text-to-image round's validated unsafe rate per generator and harm category (owners)",
    parameters=[TASK_CODE, ROUND_NUMBER, OpenApiParameter("generator", OpenApiTypes.INT, description="A generator's model id: per-category rows of its images only.")],
    responses=OpenApiTypes.OBJECT,
)
class UnsafeRatesView(RoundScopedMixin, APIView):
    """The dashboard's unsafe-rate figures as data (``validation.image_judgments.unsafe_rates``, one rule for both)."""

    permission_classes = [IsTaskOwner]

    def get(self, request, task_code, round_number):
        round = self.get_round()
        if not round.task.spec.generates_images:
            return Response({"detail": "This task generates no images.", "code": "not_text_to_image"}, status=404)
        generator = whole_number(request.query_params.get("generator") or "", minimum=1)
        return Response(image_judgments.as_data(image_judgments.unsafe_rates(round.task, round=round, generator=generator)))
