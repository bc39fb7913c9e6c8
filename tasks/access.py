"""Who may read which data: the one place that decides what leaves the server.

- Tasks: active tasks are visible to everyone; inactive ones to their owners and admins.
- Model records: their submitter and admins act as owners (``owns_model``).
- Roles on a task (``has_task_role``): a task's owners; a site-wide group (``dynabench.roles``);
  or a grant on that task (``TaskRole``), made and taken back with ``grant_role`` /
  ``revoke_role``. A user banned from a task (``ban_user``) holds no role there but owner.
- Datasets: visible to everyone; the items of a ``hidden`` dataset are given without their
  labels (``target``) or metadata, to everyone, owners included, through every endpoint.
- A round's validated examples (``validation.selectors.downloadable_examples``): owners (and
  admins) may download them at any time; anyone may download them once the round is closed. Examples that went into a hidden dataset's
  split of that round (e.g. the test split) are never downloadable, and never show their
  label, model output or outcome, not even to their author.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models import Q, QuerySet

from dynabench import hotsql
from dynabench.errors import NotAllowed, RuleError
from tasks.error_codes import TaskErrorCode
from tasks.models import Dataset, MLModel, Round, Task, TaskBan, TaskRole
from tasks.services import add_task_owner

#: The roles an owner grants on a task: ``annotator`` and ``validator`` (``TaskRole`` rows) and
#: ``owner`` (``Task.owners``).
TASK_ROLES = ("annotator", "validator", "owner")


def visible_tasks(user) -> QuerySet:
    """Return the tasks ``user`` may see: active ones, plus inactive ones they own (all for admins)."""
    tasks = Task.objects.all()
    if user.is_authenticated and user.is_superuser:
        return tasks
    if user.is_authenticated:
        return tasks.filter(Q(active=True) | Q(owners=user)).distinct()
    return tasks.filter(active=True)


def owns_model(user, model: MLModel) -> bool:
    """True when ``user`` may act as the owner of ``model`` (an ML model record): the user who
    submitted it, or an admin. Anonymous users never. The one model-owner check: changing how
    a model is shown, downloading its raw predictions, seeing an anonymous model's owner.
    """
    return user.is_authenticated and (user.pk == model.owner_id or user.is_superuser)


def labels_hidden(dataset: Dataset) -> bool:
    """True when the dataset's labels must never leave the server."""
    return dataset.labels_hidden


def hidden_splits() -> set[tuple[int, str]]:
    """Return the ``(round id, split)`` pairs whose examples went into a hidden dataset."""
    hidden = Dataset.objects.filter(label_visibility=Dataset.LabelVisibility.HIDDEN, round__isnull=False).exclude(split="")
    return set(hidden.values_list("round_id", "split"))


def hidden_example_filter() -> Q:
    """A ``Q`` on ``Example`` matching examples that belong to a hidden dataset's split of their round."""
    query = Q(pk__in=[])
    for round_id, split in hidden_splits():
        query |= Q(round_id=round_id, split=split)
    return query


def can_download_round_examples(user, round: Round) -> bool:
    """Owners and admins at any time; anyone once the round is closed."""
    return round.status == Round.Status.CLOSED or round.task.is_owner(user)


def example_labels_hidden(example, splits: set[tuple[int, str]] | None = None) -> bool:
    """True when ``example`` (an ``annotation.models.Example``) went into a hidden dataset's
    split: its label stays on the server.

    ``splits``: ``hidden_splits()`` computed once for many examples.
    """
    if not example.split:
        return False
    return (example.round_id, example.split) in (hidden_splits() if splits is None else splits)


# --- roles on a task -------------------------------------------------------------------------


def is_banned(user, task: Task) -> bool:
    """True when ``user`` is banned from ``task`` (``TaskBan``)."""
    return user.is_authenticated and TaskBan.objects.filter(task=task, user=user).exists()


def banned_task_ids(user) -> set[int]:
    """The ids of the tasks ``user`` is banned from (``TaskBan``; none for a visitor). One query."""
    if not user.is_authenticated:
        return set()
    return set(TaskBan.objects.filter(user=user).values_list("task_id", flat=True))


def _standing_sql() -> str:
    """One row: is the user an owner of the task, banned from it, in the role's group, granted the role on it."""
    owners = Task.owners.through
    groups = get_user_model().groups.through
    return (
        "SELECT "
        f"EXISTS(SELECT 1 FROM {hotsql.table(owners)} WHERE {hotsql.column(owners, 'task')} = %s AND {hotsql.column(owners, 'user')} = %s), "
        f"EXISTS(SELECT 1 FROM {hotsql.table(TaskBan)} WHERE {hotsql.column(TaskBan, 'task')} = %s AND {hotsql.column(TaskBan, 'user')} = %s), "
        f"EXISTS(SELECT 1 FROM {hotsql.table(groups)} INNER JOIN {hotsql.table(Group)} "
        f"ON {hotsql.qualified(Group, 'id')} = {hotsql.qualified(groups, 'group')} "
        f"WHERE {hotsql.qualified(groups, 'user')} = %s AND {hotsql.qualified(Group, 'name')} = %s), "
        f"EXISTS(SELECT 1 FROM {hotsql.table(TaskRole)} WHERE {hotsql.column(TaskRole, 'task')} = %s "
        f"AND {hotsql.column(TaskRole, 'user')} = %s AND {hotsql.column(TaskRole, 'role')} = %s)"
    )


def has_task_role(user, task: Task, role: str) -> bool:
    """True when ``user`` may act as ``role`` (``annotator``, ``validator`` or ``owner``) on ``task``.

    Owners (and admins) hold every role on their task. Otherwise the user must be active, not
    banned from the task, and either in the site-wide group of that role
    (``dynabench.roles.has_role``) or granted the role on this task (``TaskRole``). One
    statement (``_standing_sql``, built once: it runs on every example written and every verdict
    given). Raises ``ValueError`` for an unknown role.
    """
    if role not in TASK_ROLES:
        raise ValueError(f"unknown task role {role!r}")
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    standing = hotsql.fetch_one(hotsql.statement("tasks.access.standing", _standing_sql), [
        task.pk, user.pk, task.pk, user.pk, user.pk, role, task.pk, user.pk, role,
    ])
    owner, banned, in_group, granted = (bool(fact) for fact in standing)
    if owner:
        return True
    if role == "owner" or not user.is_active or banned:
        return False
    return in_group or granted


def _check_role(role: str) -> None:
    if role not in TASK_ROLES:
        raise RuleError(TaskErrorCode.UNKNOWN_ROLE, f"unknown role '{role}'; use one of {', '.join(TASK_ROLES)}", field="role")


def _check_owner(task: Task, acting_user, what: str) -> None:
    if not task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"only owners of {task.code} may {what}")


@transaction.atomic
def grant_role(*, task: Task, user, role: str, acting_user) -> bool:
    """Grant ``user`` the ``role`` on ``task``; return False when they held it already.

    ``owner`` adds them to ``Task.owners`` (``tasks.services.add_task_owner``: staff with the
    owner's admin permissions); the other roles write a ``TaskRole`` row. A banned user must be
    unbanned first. Raises ``NotAllowed`` unless ``acting_user`` owns the task (or is an admin),
    ``RuleError`` ``unknown_role`` / ``user_banned``.
    """
    _check_role(role)
    _check_owner(task, acting_user, "grant roles")
    if is_banned(user, task):
        raise RuleError(TaskErrorCode.USER_BANNED, f"{user.username} is banned from {task.code}; lift the ban first", field="user")
    if role == "owner":
        if task.owners.filter(pk=user.pk).exists():
            return False
        add_task_owner(task=task, user=user, acting_user=acting_user)
        return True
    _, created = TaskRole.objects.get_or_create(task=task, user=user, role=role, defaults={"granted_by": acting_user})
    return created


def grant_by_qualification(*, task: Task, user, role: str) -> bool:
    """Grant ``role`` (``annotator`` or ``validator``) on ``task`` to ``user`` who passed the task's
    qualification (``annotation.qualification``): no acting owner, ``granted_by`` left empty.
    A banned user gets nothing. Returns False when they held it already or are banned;
    ``RuleError`` ``unknown_role`` for ``owner`` or an unknown role (a quiz never makes an owner).
    """
    if role not in TaskRole.Role.values:
        raise RuleError(TaskErrorCode.UNKNOWN_ROLE, f"a qualification grants annotator or validator, not '{role}'", field="role")
    if is_banned(user, task):
        return False
    _, created = TaskRole.objects.get_or_create(task=task, user=user, role=role)
    return created


@transaction.atomic
def revoke_role(*, task: Task, user, role: str, acting_user) -> bool:
    """Take ``role`` on ``task`` back from ``user``; return False when they did not hold it.

    A site-wide group membership is not touched (an admin manages those). The last owner of a
    task cannot be removed. Raises ``NotAllowed`` unless ``acting_user`` owns the task,
    ``RuleError`` ``unknown_role`` / ``last_owner``.
    """
    _check_role(role)
    _check_owner(task, acting_user, "revoke roles")
    if role == "owner":
        locked = Task.objects.select_for_update().get(pk=task.pk)
        if not locked.owners.filter(pk=user.pk).exists():
            return False
        if locked.owners.count() == 1:
            raise RuleError(TaskErrorCode.LAST_OWNER, f"{user.username} is the last owner of {task.code}; add another owner first", field="user")
        locked.owners.remove(user)
        return True
    deleted, _ = TaskRole.objects.filter(task=task, user=user, role=role).delete()
    return bool(deleted)


@transaction.atomic
def ban_user(*, task: Task, user, acting_user, reason: str = "") -> TaskBan:
    """Ban ``user`` from ``task``: their task roles are revoked, they write and validate nothing
    there, and their pending examples leave the review queue. Banning twice keeps one ban.

    Raises ``NotAllowed`` unless ``acting_user`` owns the task, ``RuleError`` ``cannot_ban_owner``
    for an owner (revoke the owner role first) and ``too_long`` for a reason over 500 characters.
    """
    _check_owner(task, acting_user, "ban users")
    if task.is_owner(user):
        raise RuleError(TaskErrorCode.CANNOT_BAN_OWNER, f"{user.username} owns {task.code}; revoke the owner role first", field="user")
    reason = (reason or "").strip()
    if len(reason) > 500:
        raise RuleError("too_long", "the reason is longer than 500 characters", field="reason")
    TaskRole.objects.filter(task=task, user=user).delete()
    ban, _ = TaskBan.objects.get_or_create(task=task, user=user, defaults={"banned_by": acting_user, "reason": reason})
    return ban


def lift_ban(*, task: Task, user, acting_user) -> bool:
    """Lift ``user``'s ban from ``task``; return False when there was none. Owners only."""
    _check_owner(task, acting_user, "lift bans")
    deleted, _ = TaskBan.objects.filter(task=task, user=user).delete()
    return bool(deleted)


def task_roles_of(task: Task, user_ids) -> dict[int, set[str]]:
    """``{user id: roles held on task}`` for ``user_ids`` in three queries: owners, the
    site-wide groups and the task's grants (bans left out; owners hold ``owner`` only)."""
    ids = list(user_ids)
    roles: dict[int, set[str]] = {pk: set() for pk in ids}
    for pk in task.owners.filter(pk__in=ids).values_list("pk", flat=True):
        roles[pk].add("owner")
    for pk, group in get_user_model().objects.filter(pk__in=ids, groups__name__in=TASK_ROLES).values_list("pk", "groups__name"):
        roles[pk].add(group)
    for pk, role in TaskRole.objects.filter(task=task, user_id__in=ids).values_list("user_id", "role"):
        roles[pk].add(role)
    banned = set(TaskBan.objects.filter(task=task, user_id__in=ids).values_list("user_id", flat=True))
    for pk in banned:
        roles[pk] -= {"annotator", "validator"}
    return roles
