"""``/api/v1/auth/token`` (API token management) and ``/api/v1/me`` (the caller and their statistics)."""

from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.authtoken.models import Token
from rest_framework.decorators import api_view, authentication_classes, permission_classes
from rest_framework.exceptions import AuthenticationFailed, NotAuthenticated, NotFound
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.selectors import user_counts
from dynabench.roles import ROLES, has_role
from dynabench.serializers import MeSerializer, TokenRequestSerializer, TokenSerializer
from tasks.models import Task
from validation.models import Validation


def _counts(counts) -> dict:
    return {
        "collected": counts.collected, "fooled": counts.fooled, "verified_fooled": counts.verified_fooled,
        "vmer": counts.vmer, "mer": counts.mer,
    }


@extend_schema(exclude=True)
@api_view(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])
@permission_classes([AllowAny])
@authentication_classes([])
def not_found(request):
    """Any other path under ``/api/v1/``: a JSON 404 like every other API error."""
    raise NotFound(f"There is no API endpoint at {request.path}; see /api/docs/ for the list.")


class TokenView(APIView):
    """Create (or return) the caller's API token, or revoke it.

    ``POST`` with ``{"username", "password"}``, or with an authenticated session/token and
    an empty body. ``DELETE`` revokes the token of the authenticated caller; a new ``POST``
    then issues a fresh one.
    """

    permission_classes = [AllowAny]
    throttle_scope = "auth"

    @extend_schema(summary="Get an API token", request=TokenRequestSerializer, responses={200: TokenSerializer, 201: TokenSerializer})
    def post(self, request):
        serializer = TokenRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if "username" in data or "password" in data:
            user = authenticate(request, username=data.get("username", ""), password=data.get("password", ""))
            if user is None or not user.is_active:
                raise AuthenticationFailed("Wrong username or password.")
        elif request.user.is_authenticated:
            user = request.user
        else:
            raise NotAuthenticated("Send username and password, or log in first.")
        token, created = Token.objects.get_or_create(user=user)
        body = {"token": token.key, "username": user.get_username(), "created": token.created}
        return Response(TokenSerializer(body).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(summary="Revoke my API token", request=None, responses={204: None})
    def delete(self, request):
        if not request.user.is_authenticated:
            raise NotAuthenticated()
        Token.objects.filter(user=request.user).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeView(APIView):
    """The caller's account, roles, owned tasks and statistics (examples, fooled, verified fooled, vMER)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(summary="Get me and my statistics", responses=MeSerializer)
    def get(self, request):
        user = request.user
        tasks = Task.objects.filter(rounds__examples__author=user).distinct().order_by("code")
        body = {
            "id": user.pk,
            "username": user.get_username(),
            "email": user.email,
            "roles": [role for role in ROLES if has_role(user, role)],
            "is_admin": user.is_superuser,
            "owned_tasks": list(user.owned_tasks.order_by("code").values_list("code", flat=True)),
            "examples": _counts(user_counts(user)),
            "examples_by_task": [
                {"task": t.code, **_counts(user_counts(user, task=t))} for t in tasks
            ],
            "validations": Validation.objects.filter(validator=user).count(),
        }
        return Response(MeSerializer(body).data)
