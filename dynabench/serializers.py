"""API shapes of the account endpoints: API tokens (``/me`` is shaped in ``validation/serializers.py``)."""

from rest_framework import serializers

from dynabench.api import StrictSerializerMixin


class TokenRequestSerializer(StrictSerializerMixin, serializers.Serializer):
    """Credentials for a token; may be left out when the request is already authenticated (session or token)."""

    username = serializers.CharField(required=False, max_length=150)
    password = serializers.CharField(required=False, max_length=4096, style={"input_type": "password"}, write_only=True)


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")
    username = serializers.CharField()
    created = serializers.DateTimeField()
