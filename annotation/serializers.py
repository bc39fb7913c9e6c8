"""API shapes of examples: what an annotator sends, and what comes back with the model's answer.

``model_wrong`` and ``model_output`` are read-only: the server decides them
(``annotation.services.create_example``). An example that went into a hidden dataset's
split shows neither its label, nor the model's answer, nor its explanations, to anyone but the task's
owners and admins (``tasks.selectors.example_labels_hidden``).
"""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.diversity_models import ExampleDiversity
from annotation.models import Example, TransferRate, ValidationState
from dynabench.api import StrictSerializerMixin
from tasks import access
from tasks.models import Context
from tasks.selectors import example_labels_hidden, owned_task_ids

JSON_OBJECT = {"type": "object", "additionalProperties": True}
NULLABLE_JSON_OBJECT = {"type": "object", "additionalProperties": True, "nullable": True}


class ExampleCreateSerializer(StrictSerializerMixin, serializers.Serializer):
    """An annotator's example for a context of an open round."""

    task = serializers.SlugField(required=False, help_text="The task's code; when given, the context must belong to it.")
    context = serializers.IntegerField(min_value=1, help_text="Id of the context written against (from `GET /tasks/{code}/context`).")
    input = serializers.DictField(help_text='The task input fields, e.g. `{"text": "..."}` or `{"hypothesis": "..."}`.')
    target = serializers.DictField(help_text='`{"label": "..."}`, or `{"answers": [{"text", "answer_start"}]}` for QA.')
    metadata = serializers.DictField(required=False, help_text="The task's explanation fields, e.g. `example_explanation`.")
    tag = serializers.CharField(required=False, allow_blank=True, max_length=64)
    time_spent = serializers.FloatField(required=False, allow_null=True, min_value=0, help_text="Seconds from context shown to submit.")


class ExampleSerializer(serializers.ModelSerializer):
    """An example with the model's answer and its validation state."""

    task = serializers.CharField(source="round.task.code", read_only=True)
    round = serializers.IntegerField(source="round.number", read_only=True)
    context = serializers.PrimaryKeyRelatedField(read_only=True)
    model = serializers.PrimaryKeyRelatedField(read_only=True, help_text="The model in the loop that answered.")
    target = serializers.SerializerMethodField()
    model_output = serializers.SerializerMethodField(
        help_text='`{"label", "probs"}` or `{"answer", "start", "end", "score"}`; null when the example is in a hidden split.'
    )
    model_wrong = serializers.SerializerMethodField(help_text="Whether the example fooled the model, decided by the server.")
    metadata = serializers.SerializerMethodField(help_text="Explanations and flag reason; null when the example is in a hidden split.")
    transfer = serializers.SerializerMethodField(
        help_text='`{"rate", "fooled", "tried"}`: of the task\'s other ready models (the one that answered left out), '
        "how many the validated example fools (`validation/transfer.py`); null until measured, for an example not "
        "validated, or in a hidden split."
    )
    cluster = serializers.SerializerMethodField(
        help_text="The cluster the round's last diversity report put the example in (-1: none); null before a report "
        "placed it, or in a hidden split. The round's clusters: `GET /rounds/{round_id}/diversity` (owners)."
    )
    near_duplicate_of = serializers.SerializerMethodField(
        help_text="The id of the first-written example of its near-duplicate group (cosine at or above the round's "
        "threshold); null when it leads its group, before a report placed it, or in a hidden split."
    )
    labels_hidden = serializers.SerializerMethodField(
        help_text="True when the example went into a hidden dataset, whoever asks; its target, the model's answer, "
        "model_wrong and metadata are then null for everyone but the task's owners and admins."
    )

    class Meta:
        model = Example
        fields = [
            "id", "task", "round", "context", "input", "target", "model", "model_output", "model_wrong", "metadata",
            "tag", "retracted", "flagged", "split", "time_spent", "validation_state", "validation_count",
            "transfer", "cluster", "near_duplicate_of", "labels_hidden", "origin", "created_at",
        ]

    def _hidden(self, example) -> bool:
        if "hidden_splits" not in self.context:
            request = self.context.get("request")
            self.context["hidden_splits"] = access.hidden_splits()
            self.context["owned_task_ids"] = owned_task_ids(getattr(request, "user", None))
        return example_labels_hidden(
            None, example, splits=self.context["hidden_splits"], owned=self.context["owned_task_ids"]
        )

    @extend_schema_field(NULLABLE_JSON_OBJECT)
    def get_target(self, example):
        return None if self._hidden(example) else example.target

    @extend_schema_field(NULLABLE_JSON_OBJECT)
    def get_model_output(self, example):
        return None if self._hidden(example) else example.model_output

    @extend_schema_field(NULLABLE_JSON_OBJECT)
    def get_metadata(self, example):
        return None if self._hidden(example) else example.metadata

    @extend_schema_field({"type": "boolean", "nullable": True})
    def get_model_wrong(self, example):
        return None if self._hidden(example) else example.model_wrong

    @extend_schema_field(NULLABLE_JSON_OBJECT)
    def get_transfer(self, example):
        if self._hidden(example) or example.retracted or example.validation_state != ValidationState.VERIFIED_CORRECT:
            return None
        try:
            return example.transfer.as_dict()
        except TransferRate.DoesNotExist:
            return None

    def _place(self, example) -> ExampleDiversity | None:
        if self._hidden(example):
            return None
        try:
            return example.diversity
        except ExampleDiversity.DoesNotExist:
            return None

    @extend_schema_field({"type": "integer", "nullable": True})
    def get_cluster(self, example):
        place = self._place(example)
        return None if place is None else place.cluster

    @extend_schema_field({"type": "integer", "nullable": True})
    def get_near_duplicate_of(self, example):
        place = self._place(example)
        return None if place is None or place.representative_id == example.pk else place.representative_id

    def get_labels_hidden(self, example) -> bool:
        self._hidden(example)  # looks the hidden splits up once for the whole page
        return access.example_labels_hidden(example, self.context["hidden_splits"])


class FlagSerializer(StrictSerializerMixin, serializers.Serializer):
    reason = serializers.CharField(max_length=2000, help_text="Why the example should not be used.")


class ExplanationsSerializer(StrictSerializerMixin, serializers.Serializer):
    explanations = serializers.DictField(
        child=serializers.CharField(allow_blank=True, max_length=5000),
        help_text='The task explanation fields, e.g. `{"example_explanation": "..."}`.',
    )


class ChosenContextSerializer(serializers.ModelSerializer):
    """A context to write against, chosen by the task's strategy."""

    task = serializers.CharField(source="round.task.code", read_only=True)
    round = serializers.IntegerField(source="round.number", read_only=True)

    class Meta:
        model = Context
        fields = ["id", "uid", "task", "round", "data", "tag"]


class ExampleCountsSerializer(serializers.Serializer):
    """Counts over non-retracted examples (``annotation.selectors.ExampleCounts``)."""

    collected = serializers.IntegerField()
    fooled = serializers.IntegerField()
    verified_fooled = serializers.IntegerField()
    vmer = serializers.FloatField(allow_null=True, help_text="verified_fooled / collected; null when nothing was collected.")
    mer = serializers.FloatField(allow_null=True, help_text="fooled / collected; null when nothing was collected.")
