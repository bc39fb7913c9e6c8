"""Serializers of the console's API read models (``console/selectors.py``)."""

from rest_framework import serializers



class HourBucketSerializer(serializers.Serializer):
    hour = serializers.DateTimeField()
    collected = serializers.IntegerField()
    fooled = serializers.IntegerField()
    verified_fooled = serializers.IntegerField()
    cumulative_vmer = serializers.FloatField(allow_null=True)

class ModelInLoopStatsSerializer(serializers.Serializer):
    model_id = serializers.IntegerField(allow_null=True)
    name = serializers.CharField()
    collected = serializers.IntegerField()
    fooled = serializers.IntegerField()
    verified_fooled = serializers.IntegerField()
    fooling_rate = serializers.FloatField(allow_null=True)
    vmer = serializers.FloatField(allow_null=True)

class RoundDashboardSerializer(serializers.Serializer):
    """A round's dashboard (``validation.selectors.round_dashboard``): counts and vMER, examples
    per hour with the cumulative vMER, per model in the loop, the validation queue (depth and
    oldest pending), agreement, flagged examples to decide, contexts nobody used.
    The hourly and per-model figures are live (running tallies) at any size.
    ``figures_as_of``: when the queue and flag figures were computed (null:
    for this request; a round over ``FIGURES_LIVE_LIMIT`` examples reads its job's last
    computation), ``figures_stale``: the round changed since."""

    round = serializers.IntegerField()
    collected = serializers.IntegerField()
    fooled = serializers.IntegerField()
    verified_fooled = serializers.IntegerField()
    vmer = serializers.FloatField(allow_null=True)
    per_hour = HourBucketSerializer(many=True)
    per_model = ModelInLoopStatsSerializer(many=True)
    queue_depth = serializers.IntegerField()
    oldest_pending = serializers.DateTimeField(allow_null=True)
    fleiss_kappa = serializers.FloatField(allow_null=True)
    krippendorff_alpha = serializers.FloatField(allow_null=True)
    flagged_count = serializers.IntegerField()
    flagged_ids = serializers.ListField(child=serializers.IntegerField())
    unused_contexts = serializers.IntegerField()
    contexts = serializers.IntegerField()
    figures_as_of = serializers.DateTimeField(allow_null=True)
    figures_stale = serializers.BooleanField()

class PersonStatsSerializer(serializers.Serializer):
    """One person's record on a task (``validation.selectors.people_stats``)."""

    user = serializers.CharField()
    roles = serializers.ListField(child=serializers.CharField())
    banned = serializers.BooleanField()
    examples = serializers.IntegerField()
    fooling_rate = serializers.FloatField(allow_null=True)
    vmer = serializers.FloatField(allow_null=True)
    validations = serializers.IntegerField()
    validation_accuracy = serializers.FloatField(allow_null=True)
    last_active = serializers.DateTimeField(allow_null=True)
