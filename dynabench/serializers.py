"""API shapes of the account endpoints: API tokens and ``/me``."""

from rest_framework import serializers

from dynabench.api import StrictSerializerMixin
from tasks.serializers import ExampleCountsSerializer


class TokenRequestSerializer(StrictSerializerMixin, serializers.Serializer):
    """Credentials for a token; may be left out when the request is already authenticated (session or token)."""

    username = serializers.CharField(required=False, max_length=150)
    password = serializers.CharField(required=False, max_length=4096, style={"input_type": "password"}, write_only=True)


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")
    username = serializers.CharField()
    created = serializers.DateTimeField()


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
