"""What the kinds whose targets are people's judgments share (``open_ended.py``, ``text_to_image.py``).

Their target is a judgment checked by the kind's own ``clean_target`` (a rule error names the field to
fix), so an imported dataset row or file is checked by exactly the rule a person's judgment is.
"""

from __future__ import annotations

from dynabench.errors import RuleError
from tasks.kinds.base import TargetError


class TargetsCheckedAsJudgments:
    """Mixin for a ``TaskKindSpec`` whose ``clean_target(config, inputs, raw)`` checks a person's judgment:
    imports (``import_target``, ``target_from_row``) go through it too; the answers a judgment covers
    are counted one per answering model unless the kind counts them itself (``answer_counts``)."""

    def import_target(self, config, raw, inputs, *, source):
        """``clean_target`` of a file's target; raises ``TargetError`` naming ``source`` and the problem."""
        try:
            return self.clean_target(config, inputs, raw)
        except RuleError as error:
            raise TargetError(f"field '{source}': {error.message}") from None

    def target_from_row(self, config, row, inputs):
        """``(target, None)`` for a row ``clean_target`` accepts, else ``(None, the problem)``."""
        try:
            return self.clean_target(config, inputs, row), None
        except RuleError as error:
            return None, error.message

    def answer_counts(self, config, output):
        """``{model id: answers it gave}`` in this example (the generative vMER's table counts them);
        by default one per model of ``answering_models``."""
        return {model_id: 1 for model_id in self.answering_models(config, output)}
