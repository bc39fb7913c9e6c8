"""Which context an annotator writes against next.

A context is offered only from an open round; among the round's active contexts (optionally
of one tag) the task's ``context_strategy`` decides: the least used, any at random, or the one
that fooled the model least. Ties are broken at random so concurrent annotators spread out.
The create page, the REST API, the chat and text-to-image flows and validation's gold
examples all take their context here.
"""

import random

from django.db.models import Count, Q

from annotation.error_codes import AnnotationErrorCode as Code
from dynabench.errors import RuleError
from tasks.models import Context, Round

STRATEGIES = ("least_used", "uniform", "least_fooled")
_TIE_WINDOW = 50


def choose_context(*, round: Round, strategy: str | None = None, tag: str | None = None, exclude=()) -> Context:
    """Return an active context of ``round`` for an annotator to write against.

    ``strategy`` (default: the task config's ``context_strategy``, else ``least_used``):

    - ``least_used``: a context with the fewest examples written so far (``times_used``);
    - ``uniform``: any active context, uniformly at random;
    - ``least_fooled``: a context on which the model was fooled least (non-retracted
      examples with ``model_wrong``), then least used.

    Ties are broken at random so concurrent annotators spread over contexts. ``tag``
    keeps contexts with that tag only. ``exclude`` (context ids) are skipped unless
    nothing else is left ("new context" on a round with one context returns it again).
    Raises ``RuleError`` ``round_closed`` (409: a closed round takes no new examples, so the
    create page and the API show no form for it), ``unknown_strategy`` or ``no_context``.
    """
    if round.status != Round.Status.OPEN:
        raise RuleError(
            Code.ROUND_CLOSED,
            f"Round {round.number} of {round.task.name} is closed: it takes no new examples. "
            "Its owner opens the next round; check back then.",
            status_code=409,
        )
    strategy = strategy or round.task.config.get("context_strategy") or "least_used"
    if strategy not in STRATEGIES:
        raise RuleError(
            Code.UNKNOWN_STRATEGY, f"Unknown context strategy '{strategy}'; use one of {', '.join(STRATEGIES)}."
        )
    contexts = Context.objects.filter(round=round, active=True)
    if tag:
        contexts = contexts.filter(tag=tag)
    exclude = [pk for pk in exclude if pk]
    chosen = _pick_context(contexts.exclude(pk__in=exclude), strategy) if exclude else None
    chosen = chosen or _pick_context(contexts, strategy)
    if chosen is None:
        where = f" tagged '{tag}'" if tag else ""
        raise RuleError(
            Code.NO_CONTEXT,
            f"Round {round.number} of {round.task.name} has no active context{where} to write against yet. "
            "A task owner must import contexts.",
        )
    return chosen


def _pick_context(contexts, strategy: str) -> Context | None:
    if strategy == "uniform":
        count = contexts.count()
        return contexts.order_by("pk")[random.randrange(count)] if count else None
    if strategy == "least_fooled":
        fooled = Count("examples", filter=Q(examples__model_wrong=True, examples__retracted=False))
        rows = list(
            contexts.annotate(fooled=fooled)
            .order_by("fooled", "times_used", "pk")
            .values_list("pk", "fooled", "times_used")[:_TIE_WINDOW]
        )
        ties = [row[0] for row in rows if rows and row[1:] == rows[0][1:]]
    else:
        rows = list(contexts.order_by("times_used", "pk").values_list("pk", "times_used")[:_TIE_WINDOW])
        ties = [pk for pk, used in rows if used == rows[0][1]]
    if not ties:
        return None
    return Context.objects.select_related("round__task").get(pk=random.choice(ties))
