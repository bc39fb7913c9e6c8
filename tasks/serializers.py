"""API shapes of tasks, rounds, contexts and datasets (read), and of what owners send.

Counts and vMER come from ``annotation/selectors.py``; what may leave the server is
decided by ``tasks/access.py``.
"""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.selectors import round_counts
from dynabench.api import StrictSerializerMixin
from tasks import access
from tasks.models import Context, Dataset, DatasetItem, Round, Task


class RoundBriefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Round
        fields = ["number", "status"]


class TaskSerializer(serializers.ModelSerializer):
    """A task with its config (labels, fields, rules), its rounds and the caller's ownership."""

    rounds = RoundBriefSerializer(many=True, read_only=True)
    current_round = serializers.SerializerMethodField(help_text="Number of the open round with the highest number.")
    is_owner = serializers.SerializerMethodField(help_text="Whether the caller owns this task.")
    labels = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = Task
        fields = ["code", "name", "kind", "instructions", "active", "labels", "config", "current_round", "rounds", "is_owner"]

    def get_current_round(self, task) -> int | None:
        current = task.current_round()
        return current.number if current else None

    def get_is_owner(self, task) -> bool:
        return task.is_owner(self.context["request"].user)


class ExampleCountsSerializer(serializers.Serializer):
    """Counts over non-retracted examples (``annotation.selectors.ExampleCounts``)."""

    collected = serializers.IntegerField()
    fooled = serializers.IntegerField()
    verified_fooled = serializers.IntegerField()
    vmer = serializers.FloatField(allow_null=True, help_text="verified_fooled / collected; null when nothing was collected.")
    mer = serializers.FloatField(allow_null=True, help_text="fooled / collected; null when nothing was collected.")


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
        fields = ["task", "number", "status", "start", "end", "target_models", "counts", "examples_downloadable", "created_at"]

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
        child=serializers.IntegerField(min_value=1), required=False, default=list, max_length=20,
        help_text="Ids of this task's models to put in the loop.",
    )
    start = serializers.DateTimeField(required=False, allow_null=True)
    end = serializers.DateTimeField(required=False, allow_null=True)


class RoundCloseSerializer(StrictSerializerMixin, serializers.Serializer):
    """How to split the round's verified examples into datasets when it closes."""

    ratios = serializers.DictField(
        child=serializers.FloatField(min_value=0, max_value=1), required=False,
        help_text='`{"train": .8, "dev": .1, "test": .1}`; default the task\'s `split_ratios`.',
    )
    seed = serializers.IntegerField(required=False, help_text="Default the task's `split_seed`.")


class ContextSerializer(serializers.ModelSerializer):
    round = serializers.IntegerField(source="round.number", read_only=True)

    class Meta:
        model = Context
        fields = ["id", "uid", "round", "data", "tag", "times_used", "active"]


class ContextUploadSerializer(StrictSerializerMixin, serializers.Serializer):
    """A JSONL or CSV file of contexts for a round, read by the foundation importer (``tasks.importers``)."""

    file = serializers.FileField(help_text="JSONL (one JSON object per line) or CSV with a header row, UTF-8.")
    format = serializers.ChoiceField(choices=["jsonl", "csv"], required=False, help_text="Default: from the file name's extension.")
    map = serializers.ListField(
        child=serializers.CharField(max_length=200), required=False, default=list, max_length=50,
        help_text="`context field=file field` pairs, e.g. `prompt=sentence`; repeat the field for several.",
    )
    uid_field = serializers.CharField(required=False, default="uid", max_length=200, help_text="The file field holding each row's uid.")
    uid_from = serializers.ChoiceField(
        choices=["field", "line", "content"], required=False, default="field",
        help_text="Where uids come from: `uid_field`, the line number, or a hash of the content.",
    )
    tag_field = serializers.CharField(required=False, max_length=200, help_text="The file field copied to each context's tag.")


class RoundClosedSerializer(serializers.Serializer):
    round = RoundSerializer()
    datasets = serializers.ListField(child=serializers.DictField(), help_text="The datasets built from the round (train, dev, test).")


class ImportResultSerializer(serializers.Serializer):
    added = serializers.IntegerField(help_text="Rows stored now.")
    unchanged = serializers.IntegerField(help_text="Rows already stored with the same content (skipped).")
    repeated = serializers.IntegerField()
    filtered_out = serializers.IntegerField()
    checksum = serializers.CharField(help_text="sha256 of the file.")
    summary = serializers.CharField()


class DatasetSerializer(serializers.ModelSerializer):
    """A dataset; ``labels_hidden`` says whether its items come without labels."""

    task = serializers.SlugRelatedField(slug_field="code", read_only=True)
    round = serializers.IntegerField(source="round.number", read_only=True, allow_null=True)
    item_count = serializers.IntegerField(read_only=True)
    labels_hidden = serializers.SerializerMethodField()

    class Meta:
        model = Dataset
        fields = ["id", "task", "round", "name", "description", "access", "split", "weight", "item_count", "labels_hidden", "created_at"]

    def get_labels_hidden(self, dataset) -> bool:
        return access.labels_hidden(dataset)


class DatasetItemSerializer(serializers.ModelSerializer):
    """One item; ``target`` and ``metadata`` are null for a hidden dataset."""

    target = serializers.SerializerMethodField(help_text='`{"label": ..}` or `{"answers": [..]}`; null when the dataset is hidden.')
    metadata = serializers.SerializerMethodField(help_text="Null when the dataset is hidden.")

    class Meta:
        model = DatasetItem
        fields = ["uid", "input", "target", "tag", "metadata"]

    def _hidden(self) -> bool:
        return access.labels_hidden(self.context["dataset"])

    @extend_schema_field({"type": "object", "nullable": True, "additionalProperties": True})
    def get_target(self, item):
        return None if self._hidden() else item.target

    @extend_schema_field({"type": "object", "nullable": True, "additionalProperties": True})
    def get_metadata(self, item):
        return None if self._hidden() else item.metadata
