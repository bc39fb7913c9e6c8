"""API shapes of validations (a verdict sent by a validator, the example handed out for
review), of rounds with their counts and vMER and the round lifecycle (open, close), and of
``/me`` (the caller with their statistics)."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.selectors import round_counts
from annotation.serializers import ExampleCountsSerializer, ExampleSerializer
from dynabench.api import StrictSerializerMixin
from tasks import access
from tasks.models import Round
from validation.models import Validation


class ValidationCreateSerializer(StrictSerializerMixin, serializers.Serializer):
    """A verdict on an example; the rules (own example, twice, consensus) are ``record_validation``'s."""

    example = serializers.IntegerField(min_value=1)
    label = serializers.ChoiceField(choices=Validation.Label.choices)
    mode = serializers.ChoiceField(choices=Validation.Mode.choices, default=Validation.Mode.USER, help_text="`owner` for task owners' decisions.")
    metadata = serializers.DictField(
        required=False, default=dict,
        help_text="`corrected_label` or `corrected_answer`, `flag_reason` (needed with `flagged`), `explanation`; on a text-to-image "
        "example `image_verdicts` (`{sha256: \"unsafe\"|\"safe\"}`, every image) and optionally `image_categories` "
        "(`{sha256: [harm category names]}` for images judged unsafe: your correction of the annotator's categories).",
    )
    expected_state = serializers.CharField(
        required=False, max_length=24, help_text="The example's state when it was shown; a different one now means the verdict is stale."
    )


class ValidationSerializer(serializers.ModelSerializer):
    example_state = serializers.CharField(source="example.validation_state", read_only=True, help_text="The example's state after this verdict.")
    task = serializers.CharField(source="example.round.task.code", read_only=True)

    class Meta:
        model = Validation
        fields = ["id", "example", "task", "label", "mode", "metadata", "example_state", "created_at"]


#: What a validator is never shown of an example, so that its shape does not tell how it was made:
#: its origin (written, assisted or generated) and the author's time on it (a generator spends none);
#: nor where the diversity report put it (a cluster of fooling examples, a near-copy of another).
HIDDEN_FROM_VALIDATORS = ("origin", "time_spent", "cluster", "near_duplicate_of")


class ExampleForReviewSerializer(ExampleSerializer):
    """The example leased to the validator, with the context it was written for.

    Validated blind: neither its origin (written, assisted or generated) nor the author's time on it is
    given, so a person's example and a generated one come with the same keys and the same null fields."""

    context_data = serializers.JSONField(source="context.data", read_only=True)
    leased_until = serializers.DateTimeField(read_only=True)

    class Meta(ExampleSerializer.Meta):
        fields = [*(f for f in ExampleSerializer.Meta.fields if f not in HIDDEN_FROM_VALIDATORS), "context_data", "leased_until"]


class RoundSerializer(serializers.ModelSerializer):
    """A round: its status, models in the loop, counts and vMER, and whether the caller may download its examples."""

    task = serializers.SlugRelatedField(slug_field="code", read_only=True)
    target_models = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    counts = serializers.SerializerMethodField()
    examples_downloadable = serializers.SerializerMethodField(
        help_text="Whether the caller may download this round's verified examples."
    )

    class Meta:
        model = Round
        fields = ["task", "number", "status", "start", "end", "target_models", "loop_rule", "counts", "examples_downloadable", "created_at"]

    @extend_schema_field(ExampleCountsSerializer)
    def get_counts(self, round):
        known = self.context.get("round_counts") or {}
        counts = known[round.pk] if round.pk in known else round_counts(round)
        return {**{f: getattr(counts, f) for f in ("collected", "fooled", "verified_fooled")}, "vmer": counts.vmer, "mer": counts.mer}

    def get_examples_downloadable(self, round) -> bool:
        return access.can_download_round_examples(self.context["request"].user, round)


class RoundCreateSerializer(StrictSerializerMixin, serializers.Serializer):
    """What an owner sends to open the task's next round."""

    target_models = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1), required=False, default=list, max_length=20,
        help_text="Ids of this task's models to put in the loop.",
    )
    loop_rule = serializers.ChoiceField(
        choices=Round.LoopRule.choices, required=False, default=Round.LoopRule.ROUND_ROBIN,
        help_text="With several models in the loop, which answers each new example.",
    )
    start = serializers.DateTimeField(required=False, allow_null=True)
    end = serializers.DateTimeField(required=False, allow_null=True)
    without_model = serializers.BooleanField(
        required=False, default=False,
        help_text="Collect without a model in the loop (only where the task kind allows it); otherwise `target_models` may not be empty.",
    )
    contexts_from = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=2**31 - 1,
        help_text="Copy the active contexts of this earlier round into the new one.",
    )


class RoundCloseSerializer(StrictSerializerMixin, serializers.Serializer):
    """How to split the round's verified examples into datasets when it closes."""

    ratios = serializers.DictField(
        child=serializers.FloatField(min_value=0, max_value=1), required=False,
        help_text='`{"train": .8, "dev": .1, "test": .1}`; default the task\'s `split_ratios`.',
    )
    seed = serializers.IntegerField(required=False, help_text="Default the task's `split_seed`.")
    open_next = serializers.BooleanField(required=False, default=False, help_text="Open the next round in the same step, with this round's active contexts and loop rule.")
    next_loop = serializers.ChoiceField(
        choices=["current", "retrained"], required=False, default="current",
        help_text="Model in the loop of the next round: the closed round's, or one retrained on every validated example "
        "(it takes the loop when its training finishes).",
    )
    merge_small = serializers.BooleanField(
        required=False, default=False,
        help_text="Merge a dev or test split below the task's `min_scoring_items` (dev into test, or both into train) instead of refusing.",
    )


class RoundClosePreviewSerializer(serializers.Serializer):
    """What closing a round would do; ``can_close`` is false with ``problems`` saying why."""

    round = serializers.IntegerField()
    status = serializers.CharField()
    closed = serializers.BooleanField()
    can_close = serializers.BooleanField()
    ratios = serializers.DictField(child=serializers.FloatField())
    seed = serializers.IntegerField()
    validated = serializers.IntegerField(help_text="Validated-correct examples that go into the datasets.")
    splits = serializers.ListField(child=serializers.DictField(), help_text='`[{"split", "dataset", "items"}]`')
    models_rescored = serializers.ListField(child=serializers.DictField(), help_text="Models scored on the new datasets.")
    problems = serializers.ListField(child=serializers.CharField())
    min_scoring_items = serializers.IntegerField(help_text="The fewest items a dev or test set may hold (the task's setting).")
    merge_small = serializers.BooleanField()
    merges = serializers.DictField(child=serializers.CharField(), help_text='`{split: split it joins}` when merging.')
    notes = serializers.ListField(child=serializers.CharField(), help_text="What a merge does, in words.")
    warnings = serializers.ListField(child=serializers.CharField(), help_text="What does not refuse the close but matters.")


class RoundClosedSerializer(serializers.Serializer):
    round = RoundSerializer()
    datasets = serializers.ListField(child=serializers.DictField(), help_text="The datasets built from the round (train, dev, test).")


class TaskStatisticsSerializer(ExampleCountsSerializer):
    task = serializers.CharField()


class MeSerializer(serializers.Serializer):
    """The caller: roles, owned tasks, and example statistics (``annotation.selectors.user_counts``)."""

    id = serializers.IntegerField()
    username = serializers.CharField()
    email = serializers.CharField()
    roles = serializers.ListField(child=serializers.CharField())
    is_admin = serializers.BooleanField()
    owned_tasks = serializers.ListField(child=serializers.CharField(), help_text="Codes of the tasks the caller owns.")
    examples = ExampleCountsSerializer(help_text="The caller's examples over all tasks.")
    examples_by_task = TaskStatisticsSerializer(many=True)
    validations = serializers.IntegerField(help_text="Validations the caller has made.")


class ValidatedExampleSerializer(serializers.Serializer):
    """One verified example of a round as exported (``validation.export.export_rows``), ids anonymised."""

    id = serializers.IntegerField()
    task = serializers.CharField()
    round = serializers.IntegerField()
    context = serializers.DictField()
    annotator = serializers.CharField(help_text="Anonymised: a hash of the round's secret and the user id.")
    input = serializers.DictField()
    target = serializers.DictField()
    model_output = serializers.DictField()
    model_wrong = serializers.BooleanField()
    metadata = serializers.DictField()
    tag = serializers.CharField(allow_blank=True)
    retracted = serializers.BooleanField()
    flagged = serializers.BooleanField()
    split = serializers.CharField(allow_blank=True)
    validation_state = serializers.CharField()
    final_target = serializers.DictField(
        allow_null=True, help_text="The final label (an owner's correction, else the annotator's target); null unless validated."
    )
    transfer = serializers.DictField(
        allow_null=True, help_text='`{"rate", "fooled", "tried"}`: the share of the task\'s other ready models the validated '
        "example fools (fooled / tried); null when none is measured."
    )
    cluster = serializers.IntegerField(
        allow_null=True, help_text="The cluster the round's last diversity report put the example in (-1: none); null before "
        "a report placed it. The clusters' sizes and top terms: `GET /rounds/{round_id}/diversity` (owners)."
    )
    near_duplicate_of = serializers.IntegerField(
        allow_null=True, help_text="The id of the first-written example of its near-duplicate group; null when it leads "
        "its group or before a report placed it."
    )
    group_size = serializers.IntegerField(allow_null=True, help_text="How many examples its near-duplicate group holds.")
    created_at = serializers.CharField()
    time_spent = serializers.FloatField(allow_null=True)
    validations = serializers.ListField(child=serializers.DictField())


