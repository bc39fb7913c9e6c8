"""The authentication backend: Django's ``ModelBackend`` with a lighter ``get_user``."""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend as DjangoModelBackend
from django.core.exceptions import ValidationError

from dynabench import hotsql

#: The dotted path of this backend, for ``login(..., backend=PATH)`` after sign-up or a crowd entry.
PATH = "dynabench.backends.ModelBackend"


class ModelBackend(DjangoModelBackend):
    """Django's ``ModelBackend`` (passwords, permissions, ``is_active``) whose ``get_user`` reads
    the user with one fixed-shape statement (``dynabench.hotsql``) instead of compiling a
    queryset: every request of a logged-in user runs it, and on the 2-core machine compiling the
    query cost more than running it."""

    def get_user(self, user_id):
        """The active user with primary key ``user_id`` (from the session), or None."""
        user_model = get_user_model()
        try:
            pk = user_model._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        row = hotsql.fetch_one(hotsql.statement("auth.user_by_pk", _user_by_pk_sql), [pk])
        if row is None:
            return None
        (user,) = hotsql.load_row(row, user_model)
        return user if self.user_can_authenticate(user) else None


def _user_by_pk_sql() -> str:
    user = get_user_model()
    return f"SELECT {hotsql.select_list(user)} FROM {hotsql.table(user)} WHERE {hotsql.column(user, user._meta.pk.name)} = %s"
