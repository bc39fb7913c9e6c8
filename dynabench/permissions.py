"""DRF permissions for the API, checked on the server for every request and every object.

- ``HasRole("annotator")``: the user is in that role's group (superusers pass).
- ``IsTaskOwner``: the user owns the task the view or object belongs to (superusers pass).
- ``IsOwnerOfObject``: the user created the object (its ``owner``, ``author`` or ``validator``).

Views that work under a task (``/tasks/{code}/...``) expose ``get_task()``; objects find
their task through ``task_of(obj)``.
"""

from rest_framework.permissions import SAFE_METHODS, BasePermission

from dynabench.roles import has_role

#: The model label of a task (``tasks.models.Task``): ``IsTaskOwner`` checks ``task.is_owner(user)``.
TASK_MODEL = "tasks.Task"


def task_of(obj):
    """Return the task an object belongs to: itself, ``obj.task``, or ``obj.round.task``.

    A task is recognised by its model label, ``TASK_MODEL`` (this package imports no app).
    Returns None for objects without a task.
    """
    if getattr(getattr(obj, "_meta", None), "label", None) == TASK_MODEL:
        return obj
    for path in ("task", "round", "example", "dataset", "model"):
        parent = getattr(obj, path, None)
        if parent is not None:
            return task_of(parent)
    return None


class HasRole(BasePermission):
    """Allow users in ``role`` (``annotator``, ``validator``, ``researcher``), and superusers.

    Used as an instance in ``permission_classes = [HasRole("annotator")]``: DRF instantiates
    permission classes by calling them, and an instance returns itself when called.
    """

    def __init__(self, role: str, *, safe_methods: bool = False):
        self.role = role
        self.safe_methods = safe_methods
        self.message = f"This needs the {role} role; ask an admin to add it to your account."

    def __call__(self):
        return self

    def has_permission(self, request, view):
        if self.safe_methods and request.method in SAFE_METHODS:
            return True
        return has_role(request.user, self.role)


class IsTaskOwner(BasePermission):
    """Allow the task's owners (and superusers).

    On the view: the task is ``view.get_task()`` when the view defines it. On an object: the
    task is ``task_of(obj)``.
    """

    message = "Only an owner of this task may do this."

    def has_permission(self, request, view):
        get_task = getattr(view, "get_task", None)
        if get_task is None:
            return request.user.is_authenticated
        return get_task().is_owner(request.user)

    def has_object_permission(self, request, view, obj):
        task = task_of(obj)
        return task is not None and task.is_owner(request.user)


class IsOwnerOfObject(BasePermission):
    """Allow the user who created the object (``owner``/``author``/``validator``) and superusers."""

    message = "This belongs to another user."
    owner_fields = ("owner_id", "author_id", "validator_id")

    def has_permission(self, request, view):
        return request.user.is_authenticated

    def has_object_permission(self, request, view, obj):
        if request.user.is_superuser:
            return True
        return any(getattr(obj, field, None) == request.user.pk for field in self.owner_fields if hasattr(obj, field))
