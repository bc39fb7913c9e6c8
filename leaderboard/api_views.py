"""``/api/v1/models`` (submissions, status per dataset, publish, anonymise) and ``/api/v1/tasks/{code}/leaderboard``.

Rules are ``leaderboard/services.py``'s (``submit_model_archive``, ``submit_predictions``, ``submit_selection``,
``set_model_visibility``); rankings come from ``leaderboard/selectors.py`` (the Dynascore
of ``leaderboard/dynascore.py``). Views parse input, call one function, render the result.
"""

import dataclasses
import math

from django.db.models import Q
from django.http import QueryDict
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied, UnsupportedMediaType, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import AllowAny, IsAuthenticated, IsAuthenticatedOrReadOnly
from rest_framework.response import Response
from rest_framework.views import APIView

from dynabench.api import query_bool, query_choice
from dynabench.roles import has_role
from leaderboard import generative_boards, preflight, services
from leaderboard.arena_board import cached_arena_board
from leaderboard.cluster_scores import attach_per_cluster
from leaderboard.metric_rules import METRICS, MISSING_LEGACY, MISSING_PER_MODEL
from leaderboard.models import MissingMetric
from leaderboard.selectors import cache_header, cached_leaderboard_table, model_runs, parse_weights
from leaderboard.serializers import (
    AllowanceSerializer,
    ArchiveCheckResultSerializer,
    ArchiveCheckSerializer,
    ArchiveSubmissionSerializer,
    ConsentsSerializer,
    EndpointChangeSerializer,
    EndpointConnectionSerializer,
    EndpointSubmissionSerializer,
    LeaderboardSerializer,
    ModelCallSummarySerializer,
    ModelDetailSerializer,
    ModelSerializer,
    PredictionsCheckResultSerializer,
    PredictionsCheckSerializer,
    PredictionsSubmissionSerializer,
    SelectionCheckResultSerializer,
    SelectionCheckSerializer,
    SelectionSubmissionSerializer,
    VisibilitySerializer,
)
from tasks import access
from tasks.api_views import TASK_CODE, TaskScopedMixin
from tasks.loop import gate
from tasks.models import Endpoint, MLModel


def _finite(value):
    """JSON has no NaN or infinity: such a value is reported as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _table(task, params):
    """The task's leaderboard under the weights of ``params`` (``w_<metric>``, ``d_<dataset id>``)."""
    header = cache_header(task)
    metric_weights, dataset_weights = parse_weights(params, task=task, datasets=header["datasets"])
    missing = query_choice(params, "missing_metric", [*MissingMetric.values, *MISSING_LEGACY]) or MISSING_PER_MODEL
    return cached_leaderboard_table(
        task, header=header, metric_weights=metric_weights, dataset_weights=dataset_weights, missing_metric=missing,
    )


def _model_ranking(model):
    """``(dynascore, rank, [{"round", "performance"}])`` of a published, ranked model under default weights."""
    if not model.published:
        return None, None, []
    table = _table(model.task, {})
    row = next((r for r in table.rows if r.model_id == model.pk), None)
    series = next((s for s in table.rounds if s["model_id"] == model.pk), None)
    # The leaderboard works in percent (the Dynascore's scale); a model's figures are fractions like its runs'.
    rounds = [{"round": n, "performance": p / 100} for n, p in (series["points"] if series else [])]
    return (row.dynascore, row.rank, rounds) if row else (None, None, [])


@extend_schema_view(
    list=extend_schema(
        summary="List models: published ones, mine, and those of tasks I own",
        parameters=[
            OpenApiParameter("task", OpenApiTypes.STR, description="A task code."),
            OpenApiParameter("mine", OpenApiTypes.BOOL, description="Only my models."),
            OpenApiParameter("status", OpenApiTypes.STR, enum=MLModel.Status.values),
        ],
    ),
    retrieve=extend_schema(summary="Get a model with its evaluation status and scores per dataset", responses=ModelDetailSerializer),
    create=extend_schema(
        summary="Submit a model archive (Hugging Face directory, safetensors): checked now, unpacked by a job, then evaluated",
        description=(
            "The request decompresses nothing: it refuses at once (400/413/429) only what costs nothing to read (the "
            "hourly attempt throttle, refused attempts included, and the daily limit; the upload's size and format; a "
            "zip's central directory: paths, links, pickle or code files, declared unpacked size; the storage quota). "
            "An accepted one is answered 202 with the model in status `unpacking`: a job reads the archive member by "
            "member against the unpacked-size limit, checks config, architecture, labels and tokenizer, writes its "
            "files and queues its evaluation (status `queued`), or sets `failed` with `failure_reason` (e.g. a member "
            "over the limit, a link in a tar, a damaged weights file). Poll `GET /api/v1/models/{id}` for the status."
        ),
        request={"multipart/form-data": ArchiveSubmissionSerializer},
        responses={202: ModelSerializer},
    ),
    predictions=extend_schema(
        summary="Submit a predictions file; its scoring is queued",
        request={"multipart/form-data": PredictionsSubmissionSerializer},
        responses={201: ModelSerializer},
    ),
    endpoint=extend_schema(
        summary="Submit a model behind an OpenAI-compatible endpoint; its evaluation is queued",
        description=(
            "The URL must be on the platform's allow-list (no link-local, private-network or file URLs). The "
            "evaluation sends the scoring datasets' inputs (never their labels) at most `max_concurrency` at a time; "
            "throughput and latency are measured from the platform's side and memory is not measured. `api_key` is "
            "stored encrypted and never shown back."
        ),
        request=EndpointSubmissionSerializer,
        responses={201: ModelSerializer},
    ),
    selections=extend_schema(
        summary="Submit a training-set selection to a data-centric task; its training with the task's fixed recipe is queued",
        request=SelectionSubmissionSerializer,
        responses={201: ModelSerializer},
    ),
    check_predictions=extend_schema(
        summary="Check a predictions file as a submission would, storing nothing (a dry run)",
        description=(
            "Runs the very checks of `POST /api/v1/models/predictions` (role, task, size, every line: JSON, fields, "
            "labels, unknown or duplicate uids, missing items) and answers the same 400 with line-numbered problems, "
            "or 200. No model, file or job is created and the daily allowance is not spent."
        ),
        request={"multipart/form-data": PredictionsCheckSerializer},
        responses={200: PredictionsCheckResultSerializer},
    ),
    check_selection=extend_schema(
        summary="Check a data-centric selection as a submission would, storing nothing (a dry run)",
        description=(
            "Runs the checks of `POST /api/v1/models/selections` (role, task, name, pool, budget, repeated uids, uids "
            "outside the pool) and answers the same 400 naming the first offender, or 200. Nothing is stored and the "
            "daily allowance is not spent."
        ),
        request=SelectionCheckSerializer,
        responses={200: SelectionCheckResultSerializer},
    ),
    check_archive=extend_schema(
        summary="Check a model archive as a submission would, without its weights, storing nothing (a dry run)",
        description=(
            "Runs the checks of `POST /api/v1/models` that need no weights (role, task, size, members, storage quota, "
            "config, labels, tokenizer) and answers the same 400/413, or 200. Weights may be packed as empty "
            "`.safetensors` entries with their sizes in `weights_sizes`. Nothing is stored."
        ),
        request={"multipart/form-data": ArchiveCheckSerializer},
        responses={200: ArchiveCheckResultSerializer},
    ),
    allowance=extend_schema(
        summary="My submission allowance: whether I hold the researcher role and how many submissions remain in 24 hours",
        responses=AllowanceSerializer,
    ),
    consents=extend_schema(
        summary="Read or replace the purposes my endpoint may be called for besides evaluation (its submitter)",
        description=(
            "The task's owners may call a researcher's endpoint for a purpose only with its submitter's consent: `loop`, "
            "`assist`, `generate`, `transfer`, `judge`. PUT replaces the whole set; a purpose left out is refused from the "
            "next call on, in rounds already running too."
        ),
        request=ConsentsSerializer,
        responses={200: ConsentsSerializer},
    ),
    calls=extend_schema(
        summary="The calls made under my endpoint's key, per task, purpose and outcome (its submitter)",
        responses={200: ModelCallSummarySerializer(many=True)},
    ),
    connection=extend_schema(
        summary="Read or change an endpoint model's connection (its submitter; the task's owners for their own endpoints)",
        description=(
            "GET: the connection without the key (`key_set` says whether one is stored). PATCH: change any of its "
            "settings, checked as on submission (the URL against the allow-list again); `api_key` empty or absent keeps "
            "the stored key, `remove_key` clears it, and a stored key is not kept when the URL moves to another server. "
            "When what decides the answers changes, the model's `checksum` is new and the leaderboard evaluates it again; "
            "earlier runs keep the checksum they were scored with."
        ),
        request=EndpointChangeSerializer,
        responses={200: EndpointConnectionSerializer},
    ),
    publish=extend_schema(summary="Publish or unpublish my model", request=VisibilitySerializer, responses=ModelSerializer),
    anonymise=extend_schema(summary="Anonymise my model or show my name", request=VisibilitySerializer, responses=ModelSerializer),
)
class ModelViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet):
    """Models. Everyone reads published ones; owners (and the task's owners) also their unpublished ones."""

    serializer_class = ModelSerializer
    permission_classes = [IsAuthenticatedOrReadOnly]
    throttle_scopes = {
        "create": "model_uploads", "predictions": "model_uploads", "selections": "model_uploads",
        "endpoint": "model_uploads", "check_predictions": "model_checks", "check_archive": "model_checks",
        "check_selection": "model_checks",
    }

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # drf-spectacular reading the types
            return MLModel.objects.none()
        user = self.request.user
        models = MLModel.objects.select_related("task", "owner", "endpoint").filter(task__in=access.visible_tasks(user)).order_by("-created_at", "-id")
        if not user.is_authenticated:
            models = models.filter(published=True)
        elif not user.is_superuser:
            models = models.filter(Q(published=True) | Q(owner=user) | Q(task__owners=user)).distinct()
        if self.action != "list":
            return models
        params = self.request.query_params
        if params.get("task"):
            models = models.filter(task__code=params["task"])
        if query_bool(self.request, "mine"):
            models = models.filter(owner=user) if user.is_authenticated else models.none()
        wanted = query_choice(self.request, "status", MLModel.Status.values)
        if wanted:
            models = models.filter(status=wanted)
        return models

    def retrieve(self, request, *args, **kwargs):
        model = self.get_object()
        model.runs = attach_per_cluster(request.user, model_runs(model, request.user))
        model.dynascore, model.rank, model.rounds = _model_ranking(model)
        return Response(_finite(ModelDetailSerializer(model, context=self.get_serializer_context()).data))

    def _submit(self, request, serializer_class, service, file_field, answer=status.HTTP_201_CREATED):
        serializer = serializer_class(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        task = access.visible_tasks(request.user).filter(code=data["task"]).first()
        if task is None:
            raise ValidationError({"task": [f"No task with code '{data['task']}'."]})
        model = service(
            user=request.user, task=task, upload=data[file_field], name=data["name"], description=data["description"],
            anonymous=data["anonymous"], published=data["published"],
        )
        return Response(ModelSerializer(model, context=self.get_serializer_context()).data, status=answer)

    def create(self, request, *args, **kwargs):
        """202 Accepted: the archive was checked and is unpacked by a job (status ``unpacking``)."""
        if not isinstance(request.data, QueryDict):  # a JSON body: archives come as multipart files
            raise UnsupportedMediaType(request.content_type)
        return self._submit(request, ArchiveSubmissionSerializer, services.submit_model_archive, "archive",
                            answer=status.HTTP_202_ACCEPTED)

    @action(detail=False, methods=["post"], parser_classes=[MultiPartParser])
    def predictions(self, request):
        return self._submit(request, PredictionsSubmissionSerializer, services.submit_predictions, "predictions")

    @action(detail=False, methods=["post"])
    def selections(self, request):
        serializer = SelectionSubmissionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        task = access.visible_tasks(request.user).filter(code=data["task"]).first()
        if task is None:
            raise ValidationError({"task": [f"No task with code '{data['task']}'."]})
        model = services.submit_selection(
            user=request.user, task=task, uids=data["uids"], name=data["name"], description=data["description"],
            anonymous=data["anonymous"], published=data["published"],
        )
        return Response(ModelSerializer(model, context=self.get_serializer_context()).data, status=status.HTTP_201_CREATED)

    def _check_task(self, request, serializer_class):
        serializer = serializer_class(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        task = access.visible_tasks(request.user).filter(code=data["task"]).first()
        if task is None:
            raise ValidationError({"task": [f"No task with code '{data['task']}'."]})
        return task, data

    @action(detail=False, methods=["post"], url_path="predictions/check", parser_classes=[MultiPartParser],
            permission_classes=[IsAuthenticated])
    def check_predictions(self, request):
        """200 with the counts a submission would keep, or the submission's own 400; stores nothing."""
        task, data = self._check_task(request, PredictionsCheckSerializer)
        result = preflight.check_predictions(user=request.user, task=task, upload=data["predictions"], name=data["name"])
        return Response(PredictionsCheckResultSerializer({"ok": True, **dataclasses.asdict(result)}).data)

    @action(detail=False, methods=["post"], url_path="selections/check", permission_classes=[IsAuthenticated])
    def check_selection(self, request):
        """200 with the number of uids a submission would train on, or the submission's own 400; stores nothing."""
        task, data = self._check_task(request, SelectionCheckSerializer)
        result = preflight.check_selection(user=request.user, task=task, uids=data["uids"], name=data["name"])
        return Response(SelectionCheckResultSerializer({"ok": True, **dataclasses.asdict(result)}).data)

    @action(detail=False, methods=["post"], url_path="check", parser_classes=[MultiPartParser],
            permission_classes=[IsAuthenticated])
    def check_archive(self, request):
        """200 with the files a submission would keep, or the submission's own 400/413; stores nothing."""
        task, data = self._check_task(request, ArchiveCheckSerializer)
        result = preflight.check_model_archive(
            user=request.user, task=task, upload=data["archive"], weights_sizes=data["weights_sizes"], name=data["name"],
        )
        return Response(ArchiveCheckResultSerializer({"ok": True, **dataclasses.asdict(result)}).data)

    @action(detail=False, methods=["post"])
    def endpoint(self, request):
        serializer = EndpointSubmissionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        task = access.visible_tasks(request.user).filter(code=data.pop("task")).first()
        if task is None:
            raise ValidationError({"task": ["No such task."]})
        model = services.submit_endpoint(user=request.user, task=task, **data)
        return Response(ModelSerializer(model, context=self.get_serializer_context()).data, status=status.HTTP_201_CREATED)

    @action(detail=True, methods=["get", "patch"], url_path="endpoint", permission_classes=[IsAuthenticated])
    def connection(self, request, pk=None):
        """The connection of an endpoint model (``update_endpoint`` on PATCH); 403 for people who may not change it."""
        from tasks.loop.endpoints.records import can_edit_endpoint, update_endpoint
        from tasks.models import Endpoint

        model = self.get_object()
        if not can_edit_endpoint(request.user, model):
            raise PermissionDenied("Only the submitter of the model (or, for the task owners' own endpoints, the task's owners) "
                                   "sees and changes its connection.")
        if request.method == "PATCH":
            serializer = EndpointChangeSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            model = update_endpoint(model=model, acting_user=request.user, **serializer.validated_data)
        endpoint = Endpoint.objects.filter(model=model).select_related("model").first()
        if endpoint is None:
            raise NotFound("This model is not behind an endpoint.")
        return Response(EndpointConnectionSerializer(endpoint).data)

    @action(detail=True, methods=["get", "put"], url_path="consents", permission_classes=[IsAuthenticated])
    def consents(self, request, pk=None):
        """The purposes the submitter lets the task's owners call their endpoint for (``tasks.loop.gate``); PUT
        replaces them (a revocation stops the next call). Only the submitter (or an admin): 403 otherwise."""
        model = self.get_object()
        if request.method == "PUT":
            serializer = ConsentsSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            chosen = gate.set_consents(model=model, acting_user=request.user, consents=serializer.validated_data["consents"])
        elif request.user.pk == model.owner_id or request.user.is_superuser:
            chosen = list(Endpoint.objects.filter(model=model).values_list("consents", flat=True).first() or [])
        else:
            raise PermissionDenied("Only the submitter of the model sees and changes its consents.")
        return Response({"consents": chosen})

    @action(detail=True, methods=["get"], url_path="calls", permission_classes=[IsAuthenticated], pagination_class=None)
    def calls(self, request, pk=None):
        """The calls made under the model's key, per task, purpose and outcome: to its submitter (and admins) only."""
        model = self.get_object()
        if not (request.user.pk == model.owner_id or request.user.is_superuser):
            raise PermissionDenied("Only the submitter of the model sees the calls made under its key.")
        return Response(ModelCallSummarySerializer(gate.usage_by_purpose(model), many=True).data)

    @action(detail=False, methods=["get"], permission_classes=[IsAuthenticated])
    def allowance(self, request):
        allowance = services.submission_allowance(request.user)
        body = {"researcher": has_role(request.user, "researcher"), **dataclasses.asdict(allowance)}
        return Response(AllowanceSerializer(body).data)

    def _visibility(self, request, flag):
        serializer = VisibilitySerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        value = serializer.validated_data.get(flag, True)
        model = services.set_model_visibility(actor=request.user, model=self.get_object(), **{flag: value})
        return Response(ModelSerializer(model, context=self.get_serializer_context()).data)

    @action(detail=True, methods=["post"])
    def publish(self, request, pk=None):
        return self._visibility(request, "published")

    @action(detail=True, methods=["post"])
    def anonymise(self, request, pk=None):
        return self._visibility(request, "anonymous")


class LeaderboardView(TaskScopedMixin, APIView):
    """A task's leaderboard: published models with complete scores ranked by Dynascore under the given weights."""

    permission_classes = [AllowAny]

    @extend_schema(
        summary="Get a task's leaderboard under metric and dataset weights",
        parameters=[
            TASK_CODE,
            *[OpenApiParameter(f"w_{m}", OpenApiTypes.NUMBER, description=f"Weight of {m}, 0..5 (default: the task's).") for m in METRICS],
            OpenApiParameter("missing_metric", OpenApiTypes.STR, enum=MissingMetric.values,
                             description="What to do with models missing a metric."),
            OpenApiParameter("dataset_weights", OpenApiTypes.STR,
                             description="Weights per dataset, `name:weight,name:weight` (0..5; default: each dataset's weight). `d_<dataset id>=w` works too."),
        ],
        responses=LeaderboardSerializer,
    )
    def get(self, request, task_code):
        task = self.get_task()
        params = request.query_params.dict()
        if "weights" in params:  # what the client sent before it learnt the contract: say so, never ignore it
            raise ValidationError({"weights": [
                "Give each metric's weight as its own parameter, w_<metric>=0..5 (e.g. w_performance=5), "
                f"for {', '.join(METRICS)}."
            ]})
        header = cache_header(task)
        if params.get("dataset_weights"):
            by_name = {d["name"]: d["id"] for d in header["datasets"]}
            for pair in params.pop("dataset_weights").split(","):
                name, sep, weight = pair.partition(":")
                if not sep or name.strip() not in by_name:
                    raise ValidationError({"dataset_weights": [
                        f"'{pair[:60]}' is not name:weight of a scoring dataset ({', '.join(by_name) or 'none yet'})."
                    ]})
                params[f"d_{by_name[name.strip()]}"] = weight.strip()
        table = _table(task, params)
        names = {str(d["id"]): d["name"] for d in table.datasets}
        rounds = {s["model_id"]: {str(n): p for n, p in s["points"]} for s in table.rounds}
        body = {
            "task": task.code,
            "metric_weights": table.metric_weights,
            "dataset_weights": {names.get(k, k): v for k, v in table.dataset_weights.items()},
            "missing_metric": table.missing_metric,
            "datasets": [{"id": d["id"], "name": d["name"], "round": d["round"], "weight": d["weight"],
                          "not_applicable": d.get("not_applicable") or []} for d in table.datasets],
            "rows": [
                {
                    "rank": r.rank, "model_id": r.model_id, "name": r.name, "owner": r.owner, "dynascore": r.dynascore,
                    "metrics": r.averages, "contributions": r.contributions, "weights": r.weights, "missing": list(r.missing),
                    "datasets": {d["name"]: d["performance"] for d in r.datasets},
                    "ci": list(r.ci) if r.ci else None, "rank_range": list(r.rank_range) if r.rank_range else None,
                    "rounds": rounds.get(r.model_id, {}),
                }
                for r in table.rows
            ],
            "pending": table.pending,
            "rules": table.rules,
            "stability": {"stable": table.stability.stable, "reasons": table.stability_reasons()},
            "missing_metric_rule": table.per_model_rule,
            "computed_at": table.computed_at,
        }
        return Response(_finite(LeaderboardSerializer(_finite(body)).data))


class ArenaView(TaskScopedMixin, APIView):
    """A task's arena leaderboard (``leaderboard/arena_board.py``): Elo-scale ratings with 95% bootstrap
    intervals and rank ranges from validated pairwise judgments (Bradley-Terry on the decisive ones; ties counted,
    ``leaderboard/arena.py``), the win-rate matrix, battles per model, and the generative vMER per
    model and failure category. Read from the board an RQ job last built: ``as_of`` says when,
    ``computing`` whether a newer one is being built; 202 with no board before the first build."""

    permission_classes = [AllowAny]

    @extend_schema(summary="Get a task's arena leaderboard", parameters=[TASK_CODE], responses={200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT})
    def get(self, request, task_code):
        state = cached_arena_board(self.get_task())
        board = state.board
        if board is None:
            return Response({"status": "computing", "as_of": None, "computing": True}, status=status.HTTP_202_ACCEPTED)
        return Response({
            "status": "computing" if state.computing else "ready", "as_of": state.computed_at, "computing": state.computing,
            "method": ("Bradley-Terry on the decisive battles; ties and 'both bad' are counted and resampled but move no rating; "
                       "percentile bootstrap over battles"),
            "battles": board.battles, "pending_judgments": board.pending, "tie_share": board.tie_share, "resamples": board.resamples,
            "models": board.models,
            "ratings": [{
                "model": row.model, "rating": row.rating, "interval": [row.rating_low, row.rating_high], "rank": row.rank,
                "rank_range": [row.rank_best, row.rank_worst], "battles": row.battles, "wins": row.wins,
                "losses": row.losses, "ties": row.ties,
            } for row in board.rows],
            "win_rate": board.win_rate,
            "failure_rates": board.failures,
            "agreement": {item: dataclasses.asdict(a) for item, a in board.agreement.items()},
        })


class GenerativeBoardsView(TaskScopedMixin, APIView):
    """A task's leaderboards of generative work judged by people (``leaderboard/generative_boards.py``):
    text-to-image generators ranked by validated unsafe rate, overall and per harm category, with 95%
    Wilson intervals; chat models' arena ratings and generative vMER. Both lists are empty (``chat``
    null) for a task whose kind has neither."""

    permission_classes = [AllowAny]

    @extend_schema(summary="Get a task's leaderboards of generative work", parameters=[TASK_CODE], responses={200: OpenApiTypes.OBJECT})
    def get(self, request, task_code):
        return Response(_finite(generative_boards.as_data(self.get_task())))
