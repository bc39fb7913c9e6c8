"""API shapes of validations: a verdict sent by a validator, and the example handed out for review."""

from rest_framework import serializers

from annotation.serializers import ExampleSerializer
from dynabench.api import StrictSerializerMixin
from validation.models import Validation


class ValidationCreateSerializer(StrictSerializerMixin, serializers.Serializer):
    """A verdict on an example; the rules (own example, twice, consensus) are ``record_validation``'s."""

    example = serializers.IntegerField(min_value=1)
    label = serializers.ChoiceField(choices=Validation.Label.choices)
    mode = serializers.ChoiceField(choices=Validation.Mode.choices, default=Validation.Mode.USER, help_text="`owner` for task owners' decisions.")
    metadata = serializers.DictField(
        required=False, default=dict,
        help_text="`corrected_label` or `corrected_answer`, `flag_reason` (needed with `flagged`), `explanation`.",
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


class ExampleForReviewSerializer(ExampleSerializer):
    """The example leased to the validator, with the context it was written for."""

    context_data = serializers.JSONField(source="context.data", read_only=True)
    leased_until = serializers.DateTimeField(read_only=True)

    class Meta(ExampleSerializer.Meta):
        fields = [*ExampleSerializer.Meta.fields, "context_data", "leased_until"]
