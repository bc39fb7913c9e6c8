"""The ``data_centric`` kind: labels as classification; participants submit a selection of
uids from the owner's candidate pool, trained with the task's fixed recipe (DataPerf-style)."""

from __future__ import annotations



from dynabench.errors import RuleError
from tasks.error_codes import TargetErrorCode
from tasks.kinds.base import register
from tasks.kinds.classification import LABEL_PROPERTIES, ClassificationSpec

MAX_UNKNOWN_LISTED = 10
"""A refused selection names at most this many of its uids that are not in the pool (then counts them all)."""


_DATA_CENTRIC_PROPERTIES = {
    "data_centric": {
        "type": "object",
        "required": ["pool", "budget"],
        "additionalProperties": False,
        "properties": {
            "pool": {"type": "string", "minLength": 1, "description": "Name of the dataset holding the candidate pool."},
            "budget": {"type": "integer", "minimum": 1, "description": "At most this many pool items per selection."},
            "seed": {"type": "integer", "description": "Training seed of the fixed recipe (default 13)."},
            "recipe": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "epochs": {"type": "integer", "minimum": 1, "maximum": 100},
                    "batch_size": {"type": "integer", "minimum": 1, "maximum": 512},
                    "learning_rate": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                    "max_length": {"type": "integer", "minimum": 8, "maximum": 512},
                },
            },
        },
    },
}


@register
class DataCentricSpec(ClassificationSpec):
    """Data-centric classification (DataPerf-style): participants submit a training set, not a model.

    The owner names a candidate pool (a dataset of the task, ``config["data_centric"]["pool"]``,
    never evaluated), a budget (at most ``budget`` items per selection) and the fixed recipe
    (the retraining job's settings, ``recipe``, with ``seed``; the base encoder is the
    platform's, ``tasks.loop.training.base_encoder.default_encoder``). A participant submits a list of pool uids
    (``check_selection``); an RQ job trains the recipe on exactly those items
    (``tasks.loop.training.runs.train_selection``) and the model is scored like any other on the task's
    scoring (hidden) datasets, so the leaderboard ranks selections. Targets, metrics and the
    model head are classification's.
    """

    name = "data_centric"
    display_name = "Data-centric (training-set selection)"
    config_properties = {**LABEL_PROPERTIES, **_DATA_CENTRIC_PROPERTIES}
    submissions = ("selection",)

    def config_errors(self, config):
        errors = super().config_errors(config)
        if "data_centric" not in config:
            errors.append("config.data_centric: a data-centric task needs its pool dataset and budget")
        return errors

    def training_pool(self, config):
        """The candidate pool's dataset name (never evaluated)."""
        return config["data_centric"]["pool"]

    def training_defaults(self, config):
        """The owner's fixed recipe over classification's defaults, with the task's seed."""
        settings = config.get("data_centric", {})
        return {**super().training_defaults(config), **settings.get("recipe", {}), "seed": int(settings.get("seed", 13))}

    def selection_budget(self, config):
        return int(config["data_centric"]["budget"])

    def check_selection(self, config, uids, pool_uids) -> list[str]:
        """Return the selection (uids of the pool, in the order given) or raise ``RuleError``
        (``bad_selection``, field ``uids``) naming the first offender: not a list of strings, an
        empty list, a duplicate, more uids than the budget; or, when every entry is a fresh uid
        string, the uids not in the pool, each with its entry number (the first
        ``MAX_UNKNOWN_LISTED``, then how many there are in all), so one round of fixes is enough."""
        budget = self.selection_budget(config)

        def refuse(message):
            raise RuleError(TargetErrorCode.BAD_SELECTION, message, field="uids")

        if not isinstance(uids, list) or not uids:
            refuse("A selection is a non-empty list of pool uids.")
        if len(uids) > budget:
            refuse(f"The selection has {len(uids)} uids, over the budget of {budget}; the first over it is {uids[budget]!r}.")
        seen = set()
        unknown = []
        for position, uid in enumerate(uids, start=1):
            if not isinstance(uid, str) or not uid:
                refuse(f"Entry {position} of the selection is not a uid string: {uid!r}.")
            if uid in seen:
                refuse(f"Entry {position} repeats the uid {uid!r}.")
            if uid not in pool_uids:
                unknown.append((position, uid))
            seen.add(uid)
        if unknown:
            (position, uid), rest = unknown[0], unknown[1:MAX_UNKNOWN_LISTED]
            message = f"Entry {position}: {uid!r} is not in the pool '{config['data_centric']['pool']}'."
            if rest:
                more = len(unknown) - MAX_UNKNOWN_LISTED
                message += (" Nor are " + ", ".join(f"entry {p}: {u!r}" for p, u in rest)
                            + (f" and {more:,} more" if more > 0 else "") + f" ({len(unknown):,} unknown uids in all).")
            refuse(message)
        return list(uids)
