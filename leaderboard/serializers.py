"""API shapes of model submissions, models with their evaluation status per dataset, and leaderboards."""

from rest_framework import serializers

from dynabench.api import StrictSerializerMixin
from leaderboard.metric_rules import METRICS
from leaderboard.models import EvaluationRun, MissingMetric
from leaderboard.scheduling import evaluable_datasets
from leaderboard.selectors import HIDDEN_TAG_MIN_ITEMS
from tasks import access
from tasks.loop import gate
from tasks.models import Endpoint, MLModel, Purpose


class SubmissionSerializer(StrictSerializerMixin, serializers.Serializer):
    """The common fields of a submission (multipart form)."""

    task = serializers.SlugField(help_text="The task's code.")
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="", max_length=20000, help_text="Model card, Markdown.")
    published = serializers.BooleanField(required=False, default=MLModel.PUBLISHED_BY_DEFAULT, help_text="Listed on the leaderboard once evaluated.")
    anonymous = serializers.BooleanField(required=False, default=False, help_text="Hide the owner's name on the leaderboard.")


class ArchiveSubmissionSerializer(SubmissionSerializer):
    archive = serializers.FileField(help_text="A .tar.gz, .tar or .zip of a Hugging Face directory with safetensors weights.")


class PredictionsSubmissionSerializer(SubmissionSerializer):
    predictions = serializers.FileField(help_text='JSONL, one `{"dataset", "uid", "label"}` (or `"answer"`, `"translation"`) per line, covering every scoring dataset.')


class SelectionSubmissionSerializer(SubmissionSerializer):
    """A data-centric task's submission (JSON): a training-set selection from its candidate pool."""

    name = serializers.SlugField(max_length=100, help_text="A slug unique in the task (the trained model's directory).")
    uids = serializers.ListField(
        child=serializers.JSONField(), allow_empty=True, max_length=100000,
        help_text="Uids of the task's pool items, at most the task's budget; checked whole, the first offender named.",
    )


class EndpointSubmissionSerializer(SubmissionSerializer):
    """A model behind an OpenAI-compatible endpoint (JSON). ``api_key`` is write-only: stored encrypted,
    never shown back."""

    base_url = serializers.CharField(max_length=500, help_text="e.g. https://api.example.org or http://host:8000/v1; on the platform's allow-list.")
    model_name = serializers.CharField(max_length=200, help_text="The `model` the API serves.")
    api = serializers.ChoiceField(choices=Endpoint.Api.values, required=False,
                                  help_text="chat or completions (text kinds; chat for images), transcriptions (speech "
                                            "recognition: POST /v1/audio/transcriptions with the clip). Absent: the first "
                                            "the task's kind takes (chat; transcriptions for speech recognition).")
    params = serializers.DictField(required=False, default=dict, help_text="temperature, top_p, max_tokens, seed, stop; for "
                                                                           "transcriptions: language, prompt, temperature.")
    prompt = serializers.DictField(child=serializers.CharField(allow_blank=True, max_length=5000), required=False, default=dict,
                                   help_text="Overrides of the task kind's template: system, user ($field placeholders).")
    api_key = serializers.CharField(required=False, allow_blank=True, default="", write_only=True, max_length=1000,
                                    trim_whitespace=True, style={"input_type": "password"})
    timeout_s = serializers.FloatField(required=False, default=30.0, min_value=1)  # the upper bound: records.check_timeout
    max_retries = serializers.IntegerField(required=False, default=3, min_value=0, max_value=10)
    max_concurrency = serializers.IntegerField(required=False, default=4, min_value=1, max_value=64)
    loop_allowed = serializers.BooleanField(
        required=False, default=False,
        help_text="Let the task's owners put this endpoint in an annotation loop: annotators' texts then go to it under "
                  "this key. Off by default (the endpoint is only evaluated on the leaderboard's datasets). The same as "
                  "'loop' in consents.",
    )
    consents = serializers.ListField(
        child=serializers.ChoiceField(choices=list(gate.CONSENTABLE)), required=False, default=list, max_length=len(gate.CONSENTABLE),
        help_text="The purposes besides evaluation the task's owners may call this endpoint for, under this key: loop, "
                  "assist (the writing assistant), generate (generated candidates), transfer (transfer measurements), "
                  "judge (an AI validator). Empty by default; change them later with PUT /api/v1/models/{id}/consents.",
    )


class ConsentsSerializer(StrictSerializerMixin, serializers.Serializer):
    """``PUT /api/v1/models/{id}/consents``: the purposes the submitter consents to (the whole set)."""

    consents = serializers.ListField(child=serializers.ChoiceField(choices=list(gate.CONSENTABLE)), max_length=len(gate.CONSENTABLE))


class ModelCallSummarySerializer(serializers.Serializer):
    """Calls made under an endpoint's key, per task, purpose and outcome (``tasks.loop.gate.usage_by_purpose``)."""

    task = serializers.CharField()
    purpose = serializers.ChoiceField(choices=Purpose.choices)
    status = serializers.CharField(help_text="ok, failed, refused_consent or refused_budget.")
    calls = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    last_call = serializers.DateTimeField()


class EndpointChangeSerializer(StrictSerializerMixin, serializers.Serializer):
    """``PATCH /api/v1/models/{id}/endpoint``: the connection settings to change (any subset; the others keep
    their value). ``api_key`` is write-only (empty or absent: keep the stored one); ``remove_key`` clears it."""

    base_url = serializers.CharField(max_length=500, required=False)
    model_name = serializers.CharField(max_length=200, required=False)
    api = serializers.ChoiceField(choices=Endpoint.Api.values, required=False)
    params = serializers.DictField(required=False)
    prompt = serializers.DictField(child=serializers.CharField(allow_blank=True, max_length=5000), required=False)
    api_key = serializers.CharField(required=False, allow_blank=True, write_only=True, max_length=1000, trim_whitespace=True,
                                    style={"input_type": "password"})
    api_key_env = serializers.CharField(required=False, allow_blank=True, max_length=100,
                                        help_text="Task owners only: the key's environment variable, DYNABENCH_ENDPOINT_KEY_<NAME>.")
    remove_key = serializers.BooleanField(required=False, default=False)
    timeout_s = serializers.FloatField(required=False, min_value=1, max_value=600)
    max_retries = serializers.IntegerField(required=False, min_value=0, max_value=10)
    max_concurrency = serializers.IntegerField(required=False, min_value=1, max_value=64)


class EndpointConnectionSerializer(serializers.Serializer):
    """An endpoint model's connection as its owners read it: never the key, only whether one is set."""

    model = serializers.IntegerField(source="model_id")
    checksum = serializers.CharField(source="model.checksum", help_text="sha256 of what decides the answers (not the key).")
    base_url = serializers.CharField()
    api = serializers.CharField()
    model_name = serializers.CharField()
    params = serializers.DictField()
    prompt = serializers.DictField()
    api_key_env = serializers.CharField()
    key_set = serializers.SerializerMethodField()
    timeout_s = serializers.FloatField()
    max_retries = serializers.IntegerField()
    max_concurrency = serializers.IntegerField()

    def get_key_set(self, endpoint) -> bool:
        from tasks.loop.endpoints.keys import has_api_key

        return has_api_key(endpoint)


class AllowanceSerializer(serializers.Serializer):
    """``GET /api/v1/models/allowance``: may I submit, and how many submissions remain today."""

    researcher = serializers.BooleanField(help_text="Holds the researcher role (needed to submit, except to tasks one owns).")
    limit = serializers.IntegerField(allow_null=True, help_text="Submissions allowed in any 24 hours; null: not limited (admins).")
    used = serializers.IntegerField(help_text="Submissions made in the last 24 hours (models, predictions, selections).")
    remaining = serializers.IntegerField(allow_null=True, help_text="Submissions left now; null: not limited.")
    next_at = serializers.DateTimeField(allow_null=True, help_text="When the oldest counted submission stops counting.")


class VisibilitySerializer(StrictSerializerMixin, serializers.Serializer):
    published = serializers.BooleanField(required=False)
    anonymous = serializers.BooleanField(required=False)


class ClusterScoreSerializer(serializers.Serializer):
    cluster = serializers.IntegerField(help_text="The number of the cluster in the round's diversity report; -1: items in no cluster.")
    terms = serializers.ListField(child=serializers.CharField(), help_text="The cluster's top terms (class-based TF-IDF), at most 5.")
    share = serializers.FloatField(allow_null=True, help_text="The cluster's share of the round's validated fooling examples, 0..1; null for -1.")
    n = serializers.IntegerField(help_text="Items of the dataset in the cluster.")
    score = serializers.FloatField(help_text="The model's mean per-item score on them, 0..1 (accuracy for classification).")


class PerClusterSerializer(serializers.Serializer):
    """The model's score per cluster of the diversity report of the dataset's round."""

    report_computed_at = serializers.DateTimeField(allow_null=True)
    clusters = ClusterScoreSerializer(many=True, help_text="Largest cluster first, items in no cluster (-1) last.")
    unplaced = serializers.IntegerField(help_text="Items the report has not placed (written after it was computed), left out of the clusters.")
    withheld = serializers.IntegerField(
        help_text="Clusters left out because the dataset's labels are hidden from the caller and they have fewer "
                  f"than {HIDDEN_TAG_MIN_ITEMS} items (the rule of per_tag).")


class EvaluationSerializer(serializers.ModelSerializer):
    """The model's evaluation on one dataset: status, progress, error and, once done, the scores."""

    dataset = serializers.CharField(source="dataset.name")
    dataset_id = serializers.IntegerField(source="dataset.id")
    round = serializers.IntegerField(source="dataset.round.number", allow_null=True, default=None)
    access = serializers.CharField(source="dataset.access")
    label_visibility = serializers.CharField(source="dataset.label_visibility")
    current = serializers.SerializerMethodField(help_text="False when the scores belong to an earlier version of the dataset (not ranked).")
    per_cluster = PerClusterSerializer(
        allow_null=True, read_only=True, default=None,
        help_text="The model's score per cluster of the diversity report of the dataset's round; null without a finished "
                  "report, a current done run or the per-item results.")

    class Meta:
        model = EvaluationRun
        fields = [
            "dataset", "dataset_id", "round", "access", "label_visibility", "status", "progress", "error", "n_examples",
            "performance", "metrics", "per_tag", "per_cluster", "throughput", "memory_gib", "robustness", "fairness", "queued_at",
            "started_at", "finished_at", "dataset_version", "dataset_checksum", "model_checksum", "code_version", "current",
            "history", "metric_signatures",
        ]

    def get_current(self, run) -> bool:
        return run.dataset_version is None or run.dataset_version == run.dataset.version


class RoundPerformanceSerializer(serializers.Serializer):
    round = serializers.IntegerField()
    performance = serializers.FloatField(help_text="Weighted mean of the task's performance metric over the round's datasets, 0..1.")


class ModelSerializer(serializers.ModelSerializer):
    """A model record; ``owner`` is null for anonymous models unless the caller owns it."""

    task = serializers.CharField(source="task.code")
    owner = serializers.SerializerMethodField()
    loop_allowed = serializers.SerializerMethodField(
        help_text="Endpoint models, to their owner and the task's owners: whether the owner lets the task's owners put it "
                  "in an annotation loop. Null otherwise.")
    consents = serializers.SerializerMethodField(
        help_text="Endpoint models, to their owner and the task's owners: the purposes besides evaluation its submitter "
                  "consents to. Null otherwise.")

    class Meta:
        model = MLModel
        fields = ["id", "task", "name", "description", "owner", "kind", "status", "progress", "failure_reason", "published",
                  "anonymous", "checksum", "created_at", "loop_allowed", "consents"]

    def get_owner(self, model) -> str | None:
        user = self.context["request"].user
        if model.owner is None or (model.anonymous and not access.owns_model(user, model)):
            return None
        return model.owner.get_username()

    def _consents(self, model) -> list | None:
        if not model.is_endpoint:
            return None
        user = self.context["request"].user
        owned = self.context.setdefault("_owns_task", {})  # one query per task, however many rows
        if model.task_id not in owned:
            owned[model.task_id] = model.task.is_owner(user)
        if not (access.owns_model(user, model) or owned[model.task_id]):
            return None
        return list(model.endpoint.consents or [])

    def get_loop_allowed(self, model) -> bool | None:
        consents = self._consents(model)
        return None if consents is None else Purpose.LOOP.value in consents

    def get_consents(self, model) -> list[str] | None:
        return self._consents(model)


class ModelDetailSerializer(ModelSerializer):
    """A model with its evaluation per dataset and, once ranked, its Dynascore and per-round performance."""

    perf_metric = serializers.CharField(source="task.config.perf_metric")
    evaluations = EvaluationSerializer(many=True, source="runs")
    dynascore = serializers.FloatField(allow_null=True, help_text="Under the task's default weights (the leaderboard's scale); null until ranked.")
    rank = serializers.IntegerField(allow_null=True)
    rounds = RoundPerformanceSerializer(many=True)
    waiting_for_dataset = serializers.SerializerMethodField(
        help_text="True when the model (a directory or endpoint, status `uploaded`) waits for its task's first dataset: "
                  "nothing to evaluate yet, not a failure; it is scored once one is added or a round closes.")

    class Meta(ModelSerializer.Meta):
        fields = [*ModelSerializer.Meta.fields, "perf_metric", "evaluations", "dynascore", "rank", "rounds", "waiting_for_dataset"]

    def get_waiting_for_dataset(self, model) -> bool:
        return model.status == MLModel.Status.UPLOADED and not model.is_predictions and not evaluable_datasets(model.task)


class LeaderboardDatasetSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    round = serializers.IntegerField(allow_null=True)
    weight = serializers.FloatField(help_text="Default weight of the dataset.")
    not_applicable = serializers.ListField(
        child=serializers.CharField(), required=False,
        help_text="Metrics that cannot be measured on this dataset (e.g. fairness where no item has a gendered word or a name).",
    )


class LeaderboardRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    model_id = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField(allow_null=True, help_text="Null for anonymous models.")
    dynascore = serializers.FloatField()
    metrics = serializers.DictField(
        child=serializers.FloatField(allow_null=True),
        help_text=f"Weighted means over datasets: {', '.join(METRICS)}. Performance, robustness, fairness in percent; throughput in examples/s; memory in GiB.",
    )
    contributions = serializers.DictField(
        child=serializers.FloatField(allow_null=True),
        help_text="Each metric's part of the Dynascore, w_m x'_m / |AMRS_m| (0 for a metric not counted); they sum to `dynascore`.",
    )
    weights = serializers.DictField(
        child=serializers.FloatField(),
        help_text="The model's own effective weights (sum 1): the weights of the metrics counted for it, renormalised.",
    )
    missing = serializers.ListField(
        child=serializers.CharField(),
        help_text="Counted metrics this model has no value for (e.g. a predictions file): scored on the others (`missing_metric_rule`).",
    )
    datasets = serializers.DictField(child=serializers.FloatField(allow_null=True), help_text="Performance per dataset name, percent.")
    ci = serializers.ListField(child=serializers.FloatField(), allow_null=True, help_text="95% bootstrap interval of performance, percent.")
    rank_range = serializers.ListField(child=serializers.IntegerField(), allow_null=True)
    rounds = serializers.DictField(child=serializers.FloatField(), help_text="Performance per round number, percent.")


class LeaderboardSerializer(serializers.Serializer):
    """A task's leaderboard ranked by Dynascore under the given weights (``leaderboard.selectors``)."""

    task = serializers.CharField()
    metric_weights = serializers.DictField(child=serializers.FloatField())
    dataset_weights = serializers.DictField(child=serializers.FloatField(), help_text="Weight per dataset name.")
    missing_metric = serializers.ChoiceField(
        choices=MissingMetric.choices, help_text="What the Dynascore did with models missing a weighted metric.",
    )
    datasets = LeaderboardDatasetSerializer(many=True)
    rows = LeaderboardRowSerializer(many=True)
    pending = serializers.ListField(child=serializers.DictField(), help_text="Published models not ranked yet, with the reason.")
    rules = serializers.ListField(child=serializers.DictField(), help_text="The Dynascore rule applied per metric (AMRS, edge cases).")
    stability = serializers.DictField(
        help_text="`stable` (bool) and `reasons`: whether the exchange rates (AMRS) rest on at least two model pairs "
        "whose performance differs by at least one point, and no metric adds more than ten times the best performance "
        "to every model.",
    )
    missing_metric_rule = serializers.CharField(help_text="How models without a metric are ranked, with its source.")
    computed_at = serializers.DateTimeField(allow_null=True)


class PredictionsCheckSerializer(StrictSerializerMixin, serializers.Serializer):
    """``POST /api/v1/models/predictions/check``: a predictions file to check as a submission would, storing nothing."""

    task = serializers.SlugField(help_text="The task's code.")
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="", help_text="The name you will submit under (checked too).")
    predictions = serializers.FileField(help_text="The JSONL predictions file, as for `POST /api/v1/models/predictions`.")


class SelectionCheckSerializer(StrictSerializerMixin, serializers.Serializer):
    """``POST /api/v1/models/selections/check``: a selection to check as a submission would, storing nothing."""

    task = serializers.SlugField(help_text="The task's code.")
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="", help_text="The name you will submit under (checked too).")
    uids = serializers.ListField(child=serializers.JSONField(), allow_empty=True, max_length=100000,
                                 help_text="The uids, as for `POST /api/v1/models/selections`.")


class SelectionCheckResultSerializer(serializers.Serializer):
    """A selection a submission would accept (problems are answered 400, as by a submission)."""

    ok = serializers.BooleanField()
    selected = serializers.IntegerField(help_text="Uids selected.")
    pool = serializers.CharField(help_text="The pool dataset they come from.")


class ArchiveCheckSerializer(StrictSerializerMixin, serializers.Serializer):
    """``POST /api/v1/models/check``: a model archive to check as a submission would (no weights read), storing nothing."""

    task = serializers.SlugField(help_text="The task's code.")
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="", help_text="The name you will submit under (checked too).")
    archive = serializers.FileField(help_text="A .tar.gz, .tar or .zip of a Hugging Face directory, as for `POST /api/v1/models`.")
    weights_sizes = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=100000,
        help_text='Optional JSON `{"model.safetensors": bytes}`: weights packed as empty entries, with their real sizes.',
    )


class PredictionsCheckResultSerializer(serializers.Serializer):
    """A predictions file a submission would accept (problems are answered 400, as by a submission)."""

    ok = serializers.BooleanField()
    predictions = serializers.IntegerField(help_text="Predictions kept.")
    datasets = serializers.DictField(child=serializers.IntegerField(), help_text="Predictions per scoring dataset.")


class ArchiveCheckResultSerializer(serializers.Serializer):
    """A model archive a submission would accept, as far as checks without the weights go."""

    ok = serializers.BooleanField()
    files = serializers.ListField(child=serializers.CharField(), help_text="The files a submission keeps.")
    kept_bytes = serializers.IntegerField(help_text="Their unpacked bytes (counted against the storage quota).")
