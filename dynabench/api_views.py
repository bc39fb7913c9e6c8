"""``/api/v1/auth/token`` (API token management) and the JSON 404 of ``/api/v1/``.

``/api/v1/me`` (the caller and their statistics) is ``validation/api_views.py``'s.
"""

from django.conf import settings
from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.authtoken.models import Token
from rest_framework.decorators import api_view, authentication_classes, permission_classes
from rest_framework.exceptions import AuthenticationFailed, NotAuthenticated, NotFound, Throttled
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from dynabench.serializers import TokenRequestSerializer, TokenSerializer


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
    then issues a fresh one. Wrong passwords count toward the same login lockout as the
    log-in pages (django-axes): once locked out, ``POST`` answers 429 until the cool-off ends.
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
            if getattr(request, "axes_locked_out", False):
                raise Throttled(
                    wait=settings.AXES_COOLOFF_TIME.total_seconds(),
                    detail="Too many failed log-ins for this username from this address; try again later.",
                )
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
