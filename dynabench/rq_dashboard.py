"""``/django-rq/``: django-rq's job dashboard, for superusers only.

django-rq's own views admit any staff user, and task owners are staff: an owner of one
task could empty or requeue the jobs of every task. Every dashboard view here is wrapped
so that only superusers reach it (others get 403, anonymous users the admin login). The
stats JSON views keep django-rq's own bearer-token check (``RQ_API_TOKEN``) for monitoring,
and otherwise also need a superuser.

django-rq's templates carry inline scripts (the admin action checkboxes), so these
superuser-only pages get 'unsafe-inline' scripts and styles in their Content-Security-Policy;
every other page keeps the strict policy of ``CONTENT_SECURITY_POLICY``.
"""

from functools import wraps

from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django_rq.urls import get_admin_urlpatterns, get_api_urlpatterns


def superuser_required(view, *, allow_bearer: bool = False):
    """Wrap ``view``: anonymous → admin login; signed-in non-superuser → 403 (``PermissionDenied``).

    With ``allow_bearer`` a request carrying ``Authorization: Bearer ...`` goes through to
    the view, which compares the token itself.
    """

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if allow_bearer and request.headers.get("Authorization", "").startswith("Bearer "):
            return view(request, *args, **kwargs)
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path(), reverse("admin:login"))
        if not (request.user.is_active and request.user.is_superuser):
            raise PermissionDenied("The job dashboard is for administrators only.")
        return view(request, *args, **kwargs)

    return never_cache(csp_update({"script-src": [UNSAFE_INLINE], "style-src": [UNSAFE_INLINE]})(wrapped))


def urlpatterns():
    """django-rq's URL patterns with every view wrapped by ``superuser_required`` (namespace ``django_rq``)."""
    api = get_api_urlpatterns()
    for pattern in api:
        pattern.callback = superuser_required(pattern.callback, allow_bearer=True)
    return api + get_admin_urlpatterns(view_wrapper=superuser_required)
